// ddp_rx_fifo: small first-word-fall-through FIFO in registers, 2^AW words
// of WIDTH bits, for ddp_rx's queues. in_ready is registered (not full);
// out_valid is registered (not empty). A second word may be pushed in the
// same clock behind the first (in_valid2 with in_valid, when in_ready2:
// two words free, also registered); tie in_valid2 low where one a clock is
// enough. A push into a full FIFO waits for in_ready. Latency: a word
// pushed at one edge is at the output from that edge on. Throughput: one
// or two words in and one out per clock.
//
// out_data is a register (head_reg): the oldest word, loaded from the
// words behind it (mem) or, when there are none, straight from in_data. So
// the logic behind the FIFO starts at a register rather than at a 2^AW-way
// read mux (up to 2 LUT levels saved on every path out of it). mem holds
// the count - 1 words behind the head, never more than 2^AW - 1.
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
reg [WIDTH-1:0] head_reg = {WIDTH{1'b0}};     // the oldest word (valid when not empty)
reg [AW-1:0]    wr_ptr_reg = 0;
reg [AW-1:0]    rd_ptr_reg = 0;
reg [AW:0]      count_reg = 0, count_next;
reg             full_reg = 1'b0;              // count == DEPTH
reg             room2_reg = 1'b1;             // count <= DEPTH - 2
reg             empty_reg = 1'b1;
reg             mem_ne_reg = 1'b0;            // count >= 2: a word behind the head

wire [AW-1:0]   wr_ptr1 = wr_ptr_reg + 1'b1;   // sized: the index wraps in every simulator
wire push = in_valid && !full_reg;
wire push2 = push && in_valid2 && room2_reg;
wire pop = out_ready && !empty_reg;
// The head is (re)loaded when it is empty or taken: from mem when words
// wait there, else from in_data (and in_data2, if any, goes into mem).
wire head_load = empty_reg || pop;
wire in_to_head = head_load && !mem_ne_reg && push;
wire mem_w1 = push && !in_to_head;              // in_data into mem[wr]
wire mem_w2 = push2;                            // in_data2 behind it

assign in_ready = !full_reg;
assign in_ready2 = room2_reg;
assign out_valid = !empty_reg;
assign out_data = head_reg;

// The count and its flags for each step it can take (-1 .. +2), made from
// the registers, and picked by the pushes and the pop last: a push or a
// pop that comes late (the producer's control, the consumer's ready) is
// one or two LUTs from them, not a sum and a comparison.
wire [AW:0] c_m1 = count_reg - 1'b1;
wire [AW:0] c_p1 = count_reg + 1'b1;
wire [AW:0] c_p2 = c_p1 + 1'b1;
wire [1:0]  step = {1'b0, push} + {1'b0, push2};          // pushes: 0, 1, 2
always @* begin
    case ({pop, step})
        3'b0_01, 3'b1_10: count_next = c_p1;
        3'b0_10:          count_next = c_p2;
        3'b1_00:          count_next = c_m1;
        default:          count_next = count_reg;
    endcase
end
function [3:0] flags(input [AW:0] c);   // {full, room2, empty, mem_ne}
    flags = {c == DEPTH_AW, c <= DEPTH_M2, c == {(AW+1){1'b0}}, c > {{AW{1'b0}}, 1'b1}};
endfunction
wire [3:0]  f_m1 = flags(c_m1), f_0 = flags(count_reg), f_p1 = flags(c_p1), f_p2 = flags(c_p2);
reg  [3:0]  f_next;
always @* begin
    case ({pop, step})
        3'b0_01, 3'b1_10: f_next = f_p1;
        3'b0_10:          f_next = f_p2;
        3'b1_00:          f_next = f_m1;
        default:          f_next = f_0;
    endcase
end

always @(posedge clk) begin
    if (head_load && mem_ne_reg) begin
        head_reg <= mem[rd_ptr_reg];
    end else if (in_to_head) begin
        head_reg <= in_data;
    end
    if (mem_w1) begin
        mem[wr_ptr_reg] <= in_data;
    end
    if (mem_w2) begin
        if (mem_w1) begin
            mem[wr_ptr1] <= in_data2;
        end else begin
            mem[wr_ptr_reg] <= in_data2;
        end
    end
    wr_ptr_reg <= wr_ptr_reg + {{(AW-1){1'b0}}, mem_w1} + {{(AW-1){1'b0}}, mem_w2};
    rd_ptr_reg <= rd_ptr_reg + {{(AW-1){1'b0}}, head_load && mem_ne_reg};
    count_reg <= count_next;
    {full_reg, room2_reg, empty_reg, mem_ne_reg} <= f_next;
    if (rst) begin
        wr_ptr_reg <= 0;
        rd_ptr_reg <= 0;
        count_reg <= 0;
        full_reg <= 1'b0;
        room2_reg <= 1'b1;
        empty_reg <= 1'b1;
        mem_ne_reg <= 1'b0;
    end
end

endmodule

`resetall
