// ddp_rx_fifo: small first-word-fall-through FIFO in registers, 2^AW words
// of WIDTH bits, for ddp_rx's write-address, write-data and delivery-record
// queues. in_ready is registered (not full); out_valid is registered (not
// empty); a push and a pop in the same clock are both taken, full or not
// (a push into a full FIFO waits for in_ready). Latency: a word pushed at
// one edge is at the output from that edge on. Throughput: one word in and
// one out per clock.

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

reg [WIDTH-1:0] mem [0:DEPTH-1];
reg [AW:0]      wr_ptr_reg = 0, wr_ptr_next;
reg [AW:0]      rd_ptr_reg = 0, rd_ptr_next;
reg             full_reg = 1'b0, full_next;
reg             empty_reg = 1'b1, empty_next;

wire push = in_valid && !full_reg;
wire pop = out_ready && !empty_reg;

assign in_ready = !full_reg;
assign out_valid = !empty_reg;
assign out_data = mem[rd_ptr_reg[AW-1:0]];

always @* begin
    wr_ptr_next = wr_ptr_reg + {{AW{1'b0}}, push};
    rd_ptr_next = rd_ptr_reg + {{AW{1'b0}}, pop};
    empty_next = wr_ptr_next == rd_ptr_next;
    full_next = wr_ptr_next[AW-1:0] == rd_ptr_next[AW-1:0] && wr_ptr_next[AW] != rd_ptr_next[AW];
end

always @(posedge clk) begin
    if (push) begin
        mem[wr_ptr_reg[AW-1:0]] <= in_data;
    end
    wr_ptr_reg <= wr_ptr_next;
    rd_ptr_reg <= rd_ptr_next;
    full_reg <= full_next;
    empty_reg <= empty_next;
    if (rst) begin
        wr_ptr_reg <= 0;
        rd_ptr_reg <= 0;
        full_reg <= 1'b0;
        empty_reg <= 1'b1;
    end
end

endmodule

`resetall
