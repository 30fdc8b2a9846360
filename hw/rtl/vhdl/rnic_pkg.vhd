-- rnic_pkg: small helpers the VHDL-2008 twins share: elaboration-time ones
-- (the Verilog uses $clog2 and inline expressions for the same), the
-- carry, comparison and adder trees of hw/rtl/rnic_arith.vh (cgp, gt33,
-- fadd, sum72a/sum72b, csa72, sumeq), and inc64/dec64, which stand in for
-- the Verilog's rnic_incdec.v.
--
-- Build order: this package is analysed before the entities that use it
-- (tests/hdlsim.py puts every hw/rtl/vhdl/*_pkg.vhd first; the Makefile's
-- GHDL lint imports every file and elaborates only the entities).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

package rnic_pkg is
    -- ceil(log2(n)): bits to count 0 .. n-1 (0 for n = 1).
    function clog2(n : positive) return natural;
    function imin(a : integer; b : integer) return integer;
    function to_sl(b : boolean) return std_ulogic;
    subtype u33_t is unsigned(32 downto 0);
    subtype u64_t is unsigned(63 downto 0);
    subtype u72_t is unsigned(71 downto 0);
    subtype u73_t is unsigned(72 downto 0);
    subtype u144_t is unsigned(143 downto 0);
    subtype u162_t is unsigned(161 downto 0);
    function cgp(gi : u33_t; pi : u33_t) return std_ulogic;
    function gt33(a_in : unsigned; b_in : unsigned) return std_ulogic;
    function fadd(x_in : unsigned; y_in : unsigned; ci : std_ulogic) return u33_t;
    function sum72a(x : u72_t; y : u72_t; ci : std_ulogic) return u162_t;
    function sum72b(a : u162_t) return u73_t;
    function csa72(x : u72_t; y : u72_t; z : u72_t) return u144_t;
    function sumeq(x : u72_t; y : u72_t; ci : std_ulogic; k : u72_t; m : u72_t) return std_ulogic;
    function inc64(x : u64_t) return u64_t;
    function dec64(x : u64_t) return u64_t;
end package rnic_pkg;

package body rnic_pkg is
    function clog2(n : positive) return natural is
        variable bits : natural := 0;
    begin
        while 2 ** bits < n loop
            bits := bits + 1;
        end loop;
        return bits;
    end function clog2;

    function imin(a : integer; b : integer) return integer is
    begin
        if a < b then
            return a;
        end if;
        return b;
    end function imin;

    function to_sl(b : boolean) return std_ulogic is
    begin
        if b then
            return '1';
        end if;
        return '0';
    end function to_sl;

    -- cgp(g, p): the carry out of a chain of 33 positions (bit 0 the
    -- lowest), position i generating a carry (g) or passing one on (p; g
    -- implies p), as a tree of (generate, propagate) pairs, three per node:
    -- up to 27 positions are 3 LUT levels. Positions above a narrower chain
    -- must pass the carry on (p = '1', g = '0'): callers pad to 33 bits.
    -- Bit q of gN, eN: the carry out of, and passing through, the N
    -- positions up to q, worked out with whole-word operations (cheap to
    -- simulate); only the bits at the top of each group are used, which
    -- makes the tree.
    function cgp(gi : u33_t; pi : u33_t) return std_ulogic is
        variable g, e, g3, e3, g9, e9, g27, t : unsigned(35 downto 0);
    begin
        g := "000" & gi;                     -- padded with (0, 1): neutral on top
        e := "111" & pi;
        g3 := g or (e and (shift_left(g, 1) or (shift_left(e, 1) and shift_left(g, 2))));
        e3 := e and shift_left(e, 1) and shift_left(e, 2);
        g9 := g3 or (e3 and (shift_left(g3, 3) or (shift_left(e3, 3) and shift_left(g3, 6))));
        e9 := e3 and shift_left(e3, 3) and shift_left(e3, 6);
        g27 := g9 or (e9 and (shift_left(g9, 9) or (shift_left(e9, 9) and shift_left(g9, 18))));
        t := g9 or (e9 and shift_left(g27, 9));   -- bit 35: bits 27..35 over bits 0..26
        return t(35);
    end function cgp;

    -- gt33(a, b): a > b, the carry chain of a + not b + 1 through cgp: a bit
    -- of a over b's generates, an equal one passes on (a plain > becomes a
    -- ripple carry in synthesis). Narrower operands are zero-extended to 33
    -- bits.
    function gt33(a_in : unsigned; b_in : unsigned) return std_ulogic is
        variable a, b : u33_t;
    begin
        a := resize(a_in, 33);
        b := resize(b_in, 33);
        return cgp(a and not b, not (a xor b));
    end function gt33;

    -- fadd(x, y, ci): carry & sum of x + y + ci (33 bits), carry select:
    -- each 4-bit group's sum with and without a carry in, chosen by the
    -- carry into the group, which is a comparison, x & ci > not y & '0'
    -- over the bits below it (gt33). Callers zero-extend both operands from
    -- their width w (a subtrahend as not y within w bits), and read the
    -- carry out of w bits at bit w.
    function fadd(x_in : unsigned; y_in : unsigned; ci : std_ulogic) return u33_t is
        variable x, y : unsigned(31 downto 0);
        variable xs, ys, m : u33_t;
        variable r : u33_t;
        variable s0 : unsigned(3 downto 0);
    begin
        x := resize(x_in, 32);
        y := resize(y_in, 32);
        r := (others => '0');
        xs := x & ci;
        ys := (not y) & '0';
        for gi in 0 to 7 loop
            m := (others => '0');
            m(4 * gi downto 0) := (others => '1');
            s0 := x(4 * gi + 3 downto 4 * gi) + y(4 * gi + 3 downto 4 * gi);
            if gt33(xs and m, ys and m) = '1' then
                r(4 * gi + 3 downto 4 * gi) := s0 + 1;
            else
                r(4 * gi + 3 downto 4 * gi) := s0;
            end if;
        end loop;
        r(32) := gt33(xs, ys);
        return r;
    end function fadd;

    -- Sums over two clocks, for operands too wide for one (a 16-bit sum maps
    -- to 6 LUT levels, a 32-bit one to 13). sum72a(x, y, ci), the first
    -- clock, adds each 8-bit chunk k of x and y on its own, with and without
    -- a carry in (ci goes into chunk 0, which takes no other), and returns
    -- what the second clock needs, to be registered: p & g & s1 & s0, 9 + 9
    -- + 72 + 72 bits; s0 and s1 hold the chunk sums without and with a carry
    -- in, g(k) and p(k) their carries out. A chunk is two 4-bit sums, the
    -- upper one's picked by the lower one's carry (3 LUT levels; a plain
    -- 8-bit sum is 4). sum72b(a), the second clock, finds each chunk's carry
    -- in from the g and p below it (a cgp tree each: 2 levels) and picks its
    -- sum: carry out & sum, 4 levels. (With 4-bit chunks the second clock's
    -- trees are wider, and Yosys's ABC script maps them 7 levels deep,
    -- whatever their shape.) Narrower sums zero-extend both operands and
    -- leave the top bits unused; a signed result is read from bit 71, with
    -- operands sign- (or one's complement-) extended to 72.
    function sum72a(x : u72_t; y : u72_t; ci : std_ulogic) return u162_t is
        variable r : u162_t;
        variable l0, l1, h0, h1 : unsigned(4 downto 0);
        variable c0, c1 : unsigned(0 downto 0);
    begin
        for k in 0 to 8 loop
            -- Carries into the low half: chunk 0 takes ci in both.
            if k = 0 then
                c0(0) := ci;
                c1(0) := ci;
            else
                c0(0) := '0';
                c1(0) := '1';
            end if;
            l0 := resize(x(8 * k + 3 downto 8 * k), 5) + resize(y(8 * k + 3 downto 8 * k), 5) + c0;
            l1 := resize(x(8 * k + 3 downto 8 * k), 5) + resize(y(8 * k + 3 downto 8 * k), 5) + c1;
            h0 := resize(x(8 * k + 7 downto 8 * k + 4), 5) + resize(y(8 * k + 7 downto 8 * k + 4), 5);
            h1 := resize(x(8 * k + 7 downto 8 * k + 4), 5) + resize(y(8 * k + 7 downto 8 * k + 4), 5) + 1;
            if l0(4) = '1' then
                r(8 * k + 7 downto 8 * k) := h1(3 downto 0) & l0(3 downto 0);
                r(144 + k) := h1(4);
            else
                r(8 * k + 7 downto 8 * k) := h0(3 downto 0) & l0(3 downto 0);
                r(144 + k) := h0(4);
            end if;
            if l1(4) = '1' then
                r(72 + 8 * k + 7 downto 72 + 8 * k) := h1(3 downto 0) & l1(3 downto 0);
                r(153 + k) := h1(4);
            else
                r(72 + 8 * k + 7 downto 72 + 8 * k) := h0(3 downto 0) & l1(3 downto 0);
                r(153 + k) := h0(4);
            end if;
        end loop;
        return r;
    end function sum72a;

    function sum72b(a : u162_t) return u73_t is
        variable r : u73_t;
        variable g, p, m : u33_t;
    begin
        g := resize(a(152 downto 144), 33);
        p := resize(a(161 downto 153), 33);
        for k in 0 to 8 loop
            -- The chunks below k (above, p = '1' passes it up).
            m := (others => '0');
            if k > 0 then
                m(k - 1 downto 0) := (others => '1');
            end if;
            if cgp(g and m, p or not m) = '1' then
                r(8 * k + 7 downto 8 * k) := a(72 + 8 * k + 7 downto 72 + 8 * k);
            else
                r(8 * k + 7 downto 8 * k) := a(8 * k + 7 downto 8 * k);
            end if;
        end loop;
        r(72) := cgp(g, (32 downto 9 => '1') & a(161 downto 153));
        return r;
    end function sum72b;

    -- Carry-save of three 72-bit words: x + y + z = s + c (mod 2**72), s & c;
    -- c's bit 0 is free for a carry in (or it in).
    function csa72(x : u72_t; y : u72_t; z : u72_t) return u144_t is
    begin
        return (x xor y xor z)
            & ((x(70 downto 0) and y(70 downto 0)) or (x(70 downto 0) and z(70 downto 0))
               or (y(70 downto 0) and z(70 downto 0)))
            & '0';
    end function csa72;

    -- sumeq(x, y, ci, k, m): whether (x + y + ci) and k agree on the bits of
    -- m (m's bits a run from bit 0), without a carry chain: where every lower
    -- bit agrees, the carry into bit i is fixed by bit i-1 alone (x, y and
    -- the k bit it must make), so each bit is one small check and the answer
    -- their AND. To check a carry out, give x and y a '0' bit above and k
    -- that bit.
    function sumeq(x : u72_t; y : u72_t; ci : std_ulogic; k : u72_t; m : u72_t) return std_ulogic is
        variable c : u72_t;                  -- the carry into each bit, if every lower bit agrees
    begin
        c := ((x(70 downto 0) and y(70 downto 0))
              or ((x(70 downto 0) or y(70 downto 0)) and (x(70 downto 0) xor y(70 downto 0) xor k(70 downto 0))))
             & ci;
        return to_sl(((x xor y xor k xor c) and m) = 0);
    end function sumeq;

    -- inc64(x), dec64(x): x + 1 and x - 1 (mod 2**64), what the twins use in
    -- place of the Verilog's module rnic_incdec (hw/rtl/rnic_incdec.v: a
    -- parallel prefix of the carries, for Yosys's LUT depth;
    -- the values are the same, so no VHDL entity is needed). Narrower
    -- counters zero-extend and take their low bits; x - 2 is dec64(x >> 1) &
    -- x(0).
    function inc64(x : u64_t) return u64_t is
    begin
        return x + 1;
    end function inc64;

    function dec64(x : u64_t) return u64_t is
    begin
        return x - 1;
    end function dec64;
end package body rnic_pkg;
