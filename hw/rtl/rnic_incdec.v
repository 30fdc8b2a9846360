// rnic_incdec: y = x + 1 (DEC = 0) or x - 1 (DEC = 1), mod 2^W, W 2..72,
// without a carry chain, for the wide counters of the datapath (host
// addresses, octet and beat counts).
//
// Bit i flips when x's bits below it are all ones (all zeros for x - 1:
// the same on ~x). Those carries are a radix-6 parallel prefix of ANDs:
// p1[i] covers bits i-5..i, p2[i] bits i-35..i (six p1's), and the carry
// into bit i+1 is p2[i] and p2[i-36]. p1 and p2 are kept as nets of their
// own (keep): left to itself, ABC shares the per-bit ANDs of a wide
// increment into a chain (13 LUT levels at 58 bits in ddp_rx); kept, it
// maps in 3. (ABC may still build p1 of the lowest bits from the one
// below: hw/README.md, "LUT levels".) The VHDL twins write x + 1, x - 1.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_incdec #(
    parameter W = 64,
    parameter DEC = 0
) (
    input  wire [W-1:0] x,
    output wire [W-1:0] y
);

initial begin
    if (W < 2 || W > 72) begin
        $error("rnic_incdec: W must be 2..72, got %0d", W);
        $finish;
    end
end

wire [W-2:0]            xs = DEC != 0 ? ~x[W-2:0] : x[W-2:0];
(* keep *) wire [W-2:0] p1;
(* keep *) wire [W-2:0] p2;
wire [W-2:0]            p3;             // the carry (borrow) into bit i + 1

genvar i;
generate
    for (i = 0; i < W - 1; i = i + 1) begin : g_bit
        assign p1[i] = &xs[i : (i >= 5 ? i - 5 : 0)];
        assign p2[i] = p1[i] & (i >= 6 ? p1[i >= 6 ? i - 6 : 0] : 1'b1)
                     & (i >= 12 ? p1[i >= 12 ? i - 12 : 0] : 1'b1)
                     & (i >= 18 ? p1[i >= 18 ? i - 18 : 0] : 1'b1)
                     & (i >= 24 ? p1[i >= 24 ? i - 24 : 0] : 1'b1)
                     & (i >= 30 ? p1[i >= 30 ? i - 30 : 0] : 1'b1);
        assign p3[i] = p2[i] & (i >= 36 ? p2[i >= 36 ? i - 36 : 0] : 1'b1);
    end
endgenerate

assign y = x ^ {p3, 1'b1};

endmodule

`resetall
