// rnic_arith.vh: tree-shaped comparison and addition for the datapath
// blocks, included inside a module (`include "rnic_arith.vh"; the build
// puts hw/rtl on the include path). Yosys maps a plain > or + to a ripple
// carry, several LUT levels deeper than these trees at 18 to 33 bits.

// cgp(g, p): the carry out of a chain of up to 33 positions (bit 0 the
// lowest), position i generating a carry (g) or passing one on (p; g
// implies p), as a tree of (generate, propagate) pairs, three per node: up
// to 27 positions are 3 LUT levels. Positions above a narrower chain must
// pass the carry on (p = 1, g = 0).
function cgp(input [32:0] gi, input [32:0] pi);
    // Bit q of gN, eN: the carry out of, and passing through, the N
    // positions up to q, worked out with whole-word operations (cheap to
    // simulate); only the bits at the top of each group are used, which
    // makes the tree.
    reg [35:0] g, e, g3, e3, g9, e9, g27, t;
    begin
        g = {3'b000, gi};                    // padded with (0, 1): neutral on top
        e = {3'b111, pi};
        g3 = g | (e & ((g << 1) | ((e << 1) & (g << 2))));
        e3 = e & (e << 1) & (e << 2);
        g9 = g3 | (e3 & ((g3 << 3) | ((e3 << 3) & (g3 << 6))));
        e9 = e3 & (e3 << 3) & (e3 << 6);
        g27 = g9 | (e9 & ((g9 << 9) | ((e9 << 9) & (g9 << 18))));
        t = g9 | (e9 & (g27 << 9));          // bit 35: bits 27..35 over bits 0..26
        cgp = |(t & {1'b1, 35'd0});
    end
endfunction

// gt33(a, b): a > b, the carry chain of a + ~b + 1 through cgp: a bit of a
// over b's generates, an equal one passes on. Yosys turns a plain > into a
// subtraction with a ripple carry, which ABC does not always flatten in a
// big design. Narrower operands are zero-extended.
function gt33(input [32:0] a, input [32:0] b);
    gt33 = cgp(a & ~b, ~(a ^ b));
endfunction

// Sums over two clocks, for operands too wide for one (ABC maps a 16-bit
// sum in 6 LUT levels, a 32-bit one in 13). sum72a(x, y, ci), the first
// clock, adds each 8-bit chunk k of x and y on its own, with and without a
// carry in (ci goes into chunk 0, which takes no other), and returns what
// the second clock needs, to be registered: {p, g, s1, s0}, 9 + 9 + 72 +
// 72 bits; s0 and s1 hold the chunk sums without and with a carry in, g[k]
// and p[k] their carries out. A chunk is two 4-bit sums, the upper one's
// picked by the lower one's carry (3 LUT levels; a plain 8-bit sum is 4).
// sum72b(a), the second clock, finds each chunk's carry in from the g and
// p below it (a cgp tree each: 2 levels) and picks its sum: {carry out,
// sum}, 4 levels. (With 4-bit chunks the second clock's trees are wider,
// and Yosys's ABC script (dc2) maps them 7 levels deep, whatever their
// shape.) Narrower sums zero-extend both operands and leave the top bits
// unused (Yosys drops their registers); a signed result is read from bit
// 71, with operands sign- (or one's complement-) extended to 72.
function [161:0] sum72a(input [71:0] x, input [71:0] y, input ci);
    integer k;
    reg [4:0] l0, l1, h0, h1;
    begin
        for (k = 0; k < 9; k = k + 1) begin
            l0 = {1'b0, x[8*k +: 4]} + {1'b0, y[8*k +: 4]} + {4'd0, k == 0 && ci};
            l1 = {1'b0, x[8*k +: 4]} + {1'b0, y[8*k +: 4]} + {4'd0, k != 0 || ci};
            h0 = {1'b0, x[8*k+4 +: 4]} + {1'b0, y[8*k+4 +: 4]};
            h1 = {1'b0, x[8*k+4 +: 4]} + {1'b0, y[8*k+4 +: 4]} + 5'd1;
            sum72a[8*k +: 8] = {l0[4] ? h1[3:0] : h0[3:0], l0[3:0]};
            sum72a[72 + 8*k +: 8] = {l1[4] ? h1[3:0] : h0[3:0], l1[3:0]};
            sum72a[144 + k] = l0[4] ? h1[4] : h0[4];
            sum72a[153 + k] = l1[4] ? h1[4] : h0[4];
        end
    end
endfunction

function [72:0] sum72b(input [161:0] a);
    integer k;
    reg [32:0] m;
    begin
        for (k = 0; k < 9; k = k + 1) begin
            m = (33'd1 << k) - 33'd1;        // the chunks below k (above, p = 1 passes it up)
            sum72b[8*k +: 8] = cgp({24'd0, a[152:144]} & m, {24'd0, a[161:153]} | ~m)
                               ? a[72 + 8*k +: 8] : a[8*k +: 8];
        end
        sum72b[72] = cgp({24'd0, a[152:144]}, {{24{1'b1}}, a[161:153]});
    end
endfunction

// Carry-save of three 72-bit words: x + y + z = s + c (mod 2^72), {s, c};
// c's bit 0 is free for a carry in (| it in).
function [143:0] csa72(input [71:0] x, input [71:0] y, input [71:0] z);
    csa72 = {x ^ y ^ z, (x[70:0] & y[70:0]) | (x[70:0] & z[70:0]) | (y[70:0] & z[70:0]), 1'b0};
endfunction

// sumeq(x, y, ci, k, m): whether (x + y + ci) and k agree on the bits of
// m (m's bits a run from bit 0), without a carry chain: where every lower
// bit agrees, the carry into bit i is fixed by bit i-1 alone (x, y and the
// k bit it must make), so each bit is one small check and the answer their
// AND. To check a carry out, give x and y a 0 bit above and k that bit.
function sumeq(input [71:0] x, input [71:0] y, input ci, input [71:0] k, input [71:0] m);
    reg [71:0] c;      // the carry into each bit, if every lower bit agrees
    begin
        c = {(x[70:0] & y[70:0]) | ((x[70:0] | y[70:0]) & (x[70:0] ^ y[70:0] ^ k[70:0])), ci};
        sumeq = ((x ^ y ^ k ^ c) & m) == 72'd0;
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
