// ddp_rx_fifo: small first-word-fall-through FIFO in registers, 2^AW words
// of WIDTH bits, for ddp_rx's queues. in_ready is registered (not full);
// out_valid is registered (not empty). A second word may be pushed in the
// same clock behind the first (in_valid2 with in_valid, when in_ready2:
// two words free, also registered); tie in_valid2 low where one a clock is
// enough. A push into a full FIFO waits for in_ready. Latency: a word
// pushed at one edge is at the output from that edge on. Throughput: one
// or two words in and one out per clock.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_fifo #(
    parameter WIDTH = 8,
    parameter AW = 2
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [WIDTH-1:0]  in_data,
    input  wire              in_valid,
    output wire              in_ready,
    input  wire [WIDTH-1:0]  in_data2,
    input  wire              in_valid2,
    output wire              in_ready2,

    output wire [WIDTH-1:0]  out_data,
    output wire              out_valid,
    input  wire              out_ready
);

initial begin
    if (AW < 1 || AW > 8) begin
        $error("ddp_rx_fifo: AW must be 1..8, got %0d", AW);
        $finish;
    end
end

localparam DEPTH = 1 << AW;
localparam [AW:0] DEPTH_AW = DEPTH;
localparam [AW:0] DEPTH_M2 = DEPTH - 2;

reg [WIDTH-1:0] mem [0:DEPTH-1];
reg [AW-1:0]    wr_ptr_reg = 0;
reg [AW-1:0]    rd_ptr_reg = 0;
reg [AW:0]      count_reg = 0, count_next;
reg             full_reg = 1'b0;              // count == DEPTH
reg             room2_reg = 1'b1;             // count <= DEPTH - 2
reg             empty_reg = 1'b1;

wire [AW-1:0]   wr_ptr1 = wr_ptr_reg + 1'b1;   // sized: the index wraps in every simulator
wire push = in_valid && !full_reg;
wire push2 = push && in_valid2 && room2_reg;
wire pop = out_ready && !empty_reg;

assign in_ready = !full_reg;
assign in_ready2 = room2_reg;
assign out_valid = !empty_reg;
assign out_data = mem[rd_ptr_reg];

always @* begin
    count_next = count_reg + {{AW{1'b0}}, push} + {{AW{1'b0}}, push2} - {{AW{1'b0}}, pop};
end

always @(posedge clk) begin
    if (push) begin
        mem[wr_ptr_reg] <= in_data;
    end
    if (push2) begin
        mem[wr_ptr1] <= in_data2;
    end
    wr_ptr_reg <= wr_ptr_reg + {{(AW-1){1'b0}}, push} + {{(AW-1){1'b0}}, push2};
    rd_ptr_reg <= rd_ptr_reg + {{(AW-1){1'b0}}, pop};
    count_reg <= count_next;
    full_reg <= count_next == DEPTH_AW;
    room2_reg <= count_next <= DEPTH_M2;
    empty_reg <= count_next == {(AW+1){1'b0}};
    if (rst) begin
        wr_ptr_reg <= 0;
        rd_ptr_reg <= 0;
        count_reg <= 0;
        full_reg <= 1'b0;
        room2_reg <= 1'b1;
        empty_reg <= 1'b1;
    end
end

endmodule

`resetall
