// rnic_add: s = a + b + ci mod 2^W and the carry out co, W 1..80, without
// a carry chain, for the sums and comparisons the datapath makes from
// registers in one clock (a >= b is the carry out of a + ~b + 1).
//
// The carries are a radix-3 parallel prefix (Kogge-Stone) over W + 1
// positions, position 0 the carry in and position i + 1 bit i: level k
// combines the (generate, propagate) pairs of three groups of 3^(k-1)
// positions into one of 3^k, each a LUT, so the carry into every bit is
// there after ceil(log3(W + 1)) levels (3 up to 26 bits, 4 up to 80) and
// the sum one level later. Every level is a net of its own (keep): left to
// itself, ABC shares a wide sum's terms into a chain (9 LUT levels for a
// 32-bit sum in mpa_rx_align, where a tree written as a function maps in
// 5 when synthesised alone). The VHDL twins write a + b + ci.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_add #(
    parameter W = 32
) (
    input  wire [W-1:0] a,
    input  wire [W-1:0] b,
    input  wire         ci,
    output wire [W-1:0] s,
    output wire         co
);

initial begin
    if (W < 1 || W > 80) begin
        $error("rnic_add: W must be 1..80, got %0d", W);
        $finish;
    end
end

localparam NP = W + 1;
localparam L = NP <= 3 ? 1 : NP <= 9 ? 2 : NP <= 27 ? 3 : 4;

// Level k's (generate, propagate) of the 3^k positions up to each one, in
// a vector of its own per level (the lint reads one vector for all levels
// as a combinational loop). Levels past L copy the one below.
(* keep *) wire [NP-1:0] g1, p1, g2, p2, g3, p3, g4, p4;
wire [NP-1:0] g0 = {a & b, ci};
wire [NP-1:0] p0 = {a | b, ci};

// One level: from the groups at i, i - S and i - 2S of the level below
// (none below position 0: generate 0, propagate 1).
genvar i;
generate
    for (i = 0; i < NP; i = i + 1) begin : pos
        `define RNIC_ADD_LEVEL(GO, PO, GI, PI, S) \
            assign GO[i] = GI[i] | (PI[i] & (i >= S ? GI[i >= S ? i - S : 0] : 1'b0)) \
                           | (PI[i] & (i >= S ? PI[i >= S ? i - S : 0] : 1'b1) & (i >= 2 * S ? GI[i >= 2 * S ? i - 2 * S : 0] : 1'b0)); \
            assign PO[i] = PI[i] & (i >= S ? PI[i >= S ? i - S : 0] : 1'b1) & (i >= 2 * S ? PI[i >= 2 * S ? i - 2 * S : 0] : 1'b1);
        `RNIC_ADD_LEVEL(g1, p1, g0, p0, 1)
        if (L >= 2) begin : l2
            `RNIC_ADD_LEVEL(g2, p2, g1, p1, 3)
        end else begin : n2
            assign g2[i] = g1[i];
            assign p2[i] = p1[i];
        end
        if (L >= 3) begin : l3
            `RNIC_ADD_LEVEL(g3, p3, g2, p2, 9)
        end else begin : n3
            assign g3[i] = g2[i];
            assign p3[i] = p2[i];
        end
        if (L >= 4) begin : l4
            `RNIC_ADD_LEVEL(g4, p4, g3, p3, 27)
        end else begin : n4
            assign g4[i] = g3[i];
            assign p4[i] = p3[i];
        end
        `undef RNIC_ADD_LEVEL
    end
endgenerate

// The carry into bit i: the generate of positions 0..i.
wire [NP-1:0] c = g4;
assign s = a ^ b ^ c[W-1:0];
assign co = c[W];

// (The last level's propagates are not needed.)
wire unused_ok = &{1'b0, p4};

endmodule

`resetall
