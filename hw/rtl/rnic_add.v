// rnic_add: s = a + b + ci mod 2^W and the carry out co, W 1..80, for the
// sums and comparisons the datapath makes from registers in one clock
// (a >= b is the carry out of a + ~b + 1).
//
// It was a radix-3 parallel prefix with every level kept (keep), to hold
// the carry-free LUT-level figure of `make synth` to 5 levels. The target
// is now hw/timing.md's FPGA estimate, where the sum maps to a carry chain
// and is twice as fast as that tree (a 32-bit sum between registers: 1.1
// ns against 2.2), so it is a plain sum again; the LUT-level figure of a
// block that uses it goes up (up to 13 levels for 32 bits), and is only
// reported. The VHDL twins write a + b + ci.

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

// The carry chain: on an FPGA a 32-bit sum is 8 CARRY4 (hw/timing.md: 1.1
// ns between registers, where the radix-3 prefix this module held took 2.2).
assign {co, s} = {1'b0, a} + {1'b0, b} + {{W{1'b0}}, ci};

endmodule

`resetall
