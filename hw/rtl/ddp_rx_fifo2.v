// ddp_rx_fifo2: small first-word-fall-through FIFO in registers whose two
// oldest words are both at the output, for ddp_rx's W beats when its write
// port is twice the data width: one or two words in and one or two out per
// clock. Holds 2 + 2^AW words of WIDTH bits.
//
// In: in_data (in_valid), and in_data2 behind it in the same clock
// (in_valid2, with in_valid). in_ready: a word free; in_ready2: two free
// (registers). A push that finds no room waits for in_ready.
// Out: out_data/out_valid is the oldest word, out_data2/out_valid2 the one
// behind it (registers, head0_reg and head1_reg). out_ready takes the
// oldest; out_ready2, with out_ready, takes the second as well (only when
// out_valid2). Latency: a word pushed at one edge is at the output from
// that edge on, when the words ahead of it have gone.
//
// Every pushed word is written to mem at wr (in_data2 at wr + 1), whether
// it stays there or also goes straight into a head: mem's slots follow the
// words' positions (the oldest word's is hd), so mem's writes take the
// input words as they are, with no pick between them, hd moves with the
// pops alone, and a head's next value is one pick among the heads, mem's
// two words behind them and the two input words, by the count's flags
// (registers) and the pops.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_fifo2 #(
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
    input  wire              out_ready,
    output wire [WIDTH-1:0]  out_data2,
    output wire              out_valid2,
    input  wire              out_ready2
);

initial begin
    if (AW < 2 || AW > 8) begin
        $error("ddp_rx_fifo2: AW must be 2..8, got %0d", AW);
        $finish;
    end
end

localparam DEPTH = 1 << AW;
localparam CW = AW + 2;                         // a count 0 .. DEPTH + 2
localparam [CW-1:0] CAP = DEPTH + 2;

reg [WIDTH-1:0] mem [0:DEPTH-1];
reg [WIDTH-1:0] head0_reg = {WIDTH{1'b0}};
reg [WIDTH-1:0] head1_reg = {WIDTH{1'b0}};
// Word positions, mod 2^AW: the oldest word is word hd (head0), then
// hd + 1 (head1); mem holds words hd + 2 .. wr - 1 (every pushed word is
// written at wr; the heads' own slots are never read, and may be written
// over once the FIFO holds all 2^AW + 2).
reg [AW-1:0]    wr_ptr_reg = 0;
reg [AW-1:0]    hd_ptr_reg = 0;
reg [CW-1:0]    count_reg = 0;
// Flags of the count, kept with it: heads valid (h0, h1), words in mem
// (m1: at least one, m2: at least two), room for one and for two.
reg             h0_reg = 1'b0, h1_reg = 1'b0, m1_reg = 1'b0, m2_reg = 1'b0;
reg             room1_reg = 1'b1, room2_reg = 1'b1;

wire [AW-1:0]   wr_ptr1 = wr_ptr_reg + 1'b1;
wire [AW-1:0]   hd_ptr1 = hd_ptr_reg + 1'b1;
wire [AW-1:0]   hd_ptr2 = hd_ptr1 + 1'b1;
wire [AW-1:0]   hd_ptr3 = hd_ptr2 + 1'b1;
wire push = in_valid && room1_reg;
wire push2 = push && in_valid2 && room2_reg;
wire pop = out_ready && h0_reg;
wire pop2 = pop && out_ready2 && h1_reg;

assign in_ready = room1_reg;
assign in_ready2 = room2_reg;
assign out_data = head0_reg;
assign out_valid = h0_reg;
assign out_data2 = head1_reg;
assign out_valid2 = h1_reg;

// The words that may move into the heads, in queue order: mem's oldest two,
// then the input's (mem's words, when there are any, are all older).
wire [WIDTH-1:0] m0 = mem[hd_ptr2];
wire [WIDTH-1:0] m1 = mem[hd_ptr3];
wire [WIDTH-1:0] src0 = m1_reg ? m0 : in_data;
wire [WIDTH-1:0] src1 = m2_reg ? m1 : m1_reg ? in_data : in_data2;

// Heads after the pops: h0 stays (no pop), h1 moves up (one pop), or both
// go; the places left are filled from src0, src1 in order.
reg [WIDTH-1:0] head0_next, head1_next;
always @* begin
    if (!pop) begin
        head0_next = h0_reg ? head0_reg : src0;
        head1_next = h1_reg ? head1_reg : h0_reg ? src0 : src1;
    end else if (!pop2) begin
        head0_next = h1_reg ? head1_reg : src0;
        head1_next = h1_reg ? src0 : src1;
    end else begin
        head0_next = src0;
        head1_next = src1;
    end
end

// The count and its flags for each step it can take (-2 .. +2), from the
// registers; then, for each number of pushes, the one the pops leave (p0,
// p1, p2); then the one the pushes pick, by in_valid and in_valid2 last
// (the room flags go into the picks before that), so that the inputs,
// which come late, take one LUT to the registers.
wire [CW-1:0] c_m2 = count_reg - {{(CW-2){1'b0}}, 2'd2};
wire [CW-1:0] c_m1 = count_reg - 1'b1;
wire [CW-1:0] c_p1 = count_reg + 1'b1;
wire [CW-1:0] c_p2 = c_p1 + 1'b1;
function [5:0] flags(input [CW-1:0] c);   // {h0, h1, m1, m2, room1, room2}
    flags = {c != {CW{1'b0}}, c > {{(CW-1){1'b0}}, 1'b1}, c > {{(CW-2){1'b0}}, 2'd2},
             c > {{(CW-2){1'b0}}, 2'd3}, c < CAP, c < CAP - 1'b1};
endfunction
wire [CW+5:0] s_m2 = {c_m2, flags(c_m2)};
wire [CW+5:0] s_m1 = {c_m1, flags(c_m1)};
wire [CW+5:0] s_0 = {count_reg, flags(count_reg)};
wire [CW+5:0] s_p1 = {c_p1, flags(c_p1)};
wire [CW+5:0] s_p2 = {c_p2, flags(c_p2)};
wire [CW+5:0] p0 = pop2 ? s_m2 : pop ? s_m1 : s_0;
wire [CW+5:0] p1 = pop2 ? s_m1 : pop ? s_0 : s_p1;
wire [CW+5:0] p2 = pop2 ? s_0 : pop ? s_p1 : s_p2;
wire [CW+5:0] q2 = room2_reg ? p2 : room1_reg ? p1 : p0;   // in_valid and in_valid2
wire [CW+5:0] q1 = room1_reg ? p1 : p0;                    // in_valid alone
wire [CW+5:0] s_next = in_valid ? (in_valid2 ? q2 : q1) : p0;

always @(posedge clk) begin
    if (push) begin
        mem[wr_ptr_reg] <= in_data;
    end
    if (push2) begin
        mem[wr_ptr1] <= in_data2;
    end
    head0_reg <= head0_next;
    head1_reg <= head1_next;
    wr_ptr_reg <= wr_ptr_reg + {{(AW-1){1'b0}}, push} + {{(AW-1){1'b0}}, push2};
    hd_ptr_reg <= pop2 ? hd_ptr2 : pop ? hd_ptr1 : hd_ptr_reg;
    {count_reg, h0_reg, h1_reg, m1_reg, m2_reg, room1_reg, room2_reg} <= s_next;
    if (rst) begin
        wr_ptr_reg <= 0;
        hd_ptr_reg <= 0;
        count_reg <= 0;
        h0_reg <= 1'b0;
        h1_reg <= 1'b0;
        m1_reg <= 1'b0;
        m2_reg <= 1'b0;
        room1_reg <= 1'b1;
        room2_reg <= 1'b1;
    end
end

endmodule

`resetall
