// rnic_arith.vh: tree-shaped comparison and addition for the datapath
// blocks, included inside a module (`include "rnic_arith.vh"; the build
// puts hw/rtl on the include path). Yosys maps a plain > or + to a ripple
// carry, several LUT levels deeper than these trees at 18 to 33 bits.

// gt33(a, b): a > b, as a tree of (greater, equal) pairs, three per node,
// so that a comparison of up to 27 bits is 3 LUT levels. Yosys turns a
// plain > into a subtraction with a ripple carry, which ABC does not always
// flatten in a big design. Narrower operands are zero-extended.
function gt33(input [32:0] a, input [32:0] b);
    // Bit p of gN, eN: a > b and a == b over the N bits up to p, worked
    // out with whole-word operations (cheap to simulate); only the bits at
    // the top of each group are used, which makes the tree.
    reg [35:0] g, e, g3, e3, g9, e9, g27, t;
    begin
        g = {3'b000, a & ~b};                // padded with (0, 1): neutral on top
        e = {3'b111, ~(a ^ b)};
        g3 = g | (e & ((g << 1) | ((e << 1) & (g << 2))));
        e3 = e & (e << 1) & (e << 2);
        g9 = g3 | (e3 & ((g3 << 3) | ((e3 << 3) & (g3 << 6))));
        e9 = e3 & (e3 << 3) & (e3 << 6);
        g27 = g9 | (e9 & ((g9 << 9) | ((e9 << 9) & (g9 << 18))));
        t = g9 | (e9 & (g27 << 9));          // bit 35: bits 27..35 over bits 0..26
        gt33 = |(t & {1'b1, 35'd0});
    end
endfunction

// fadd(x, y, ci): {carry, sum} of x + y + ci, carry select: each 4-bit
// group's sum with and without a carry in, chosen by the carry into the
// group, which is a comparison, {x, ci} > {~y, 0} over the bits below it
// (gt33). Yosys and ABC map that in 4 LUT levels for 18 bits, where the
// plain + gives a ripple carry (7 levels). Callers zero-extend both
// operands from their width w (a subtrahend as ~y within w bits), and read
// the carry out of w bits at bit w.
function [32:0] fadd(input [31:0] x, input [31:0] y, input ci);
    integer gi;
    reg [32:0] xs, ys, m;
    reg [3:0] s0, s1;
    reg c;
    begin
        fadd = 33'd0;
        xs = {x, ci};
        ys = {~y, 1'b0};
        for (gi = 0; gi < 8; gi = gi + 1) begin
            m = (33'd2 << (4 * gi)) - 33'd1;
            c = gt33(xs & m, ys & m);
            s0 = x[4*gi +: 4] + y[4*gi +: 4];
            s1 = x[4*gi +: 4] + y[4*gi +: 4] + 4'd1;
            fadd[4*gi +: 4] = c ? s1 : s0;
        end
        fadd[32] = gt33(xs, ys);
    end
endfunction
