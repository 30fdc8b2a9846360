-- rnic_pkg: small helpers the VHDL-2008 twins share: elaboration-time ones
-- (the Verilog uses $clog2 and inline expressions for the same), and the
-- comparison and adder trees of hw/rtl/rnic_arith.vh (gt33, fadd).
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
    function gt33(a_in : unsigned; b_in : unsigned) return std_ulogic;
    function fadd(x_in : unsigned; y_in : unsigned; ci : std_ulogic) return u33_t;
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

    -- gt33(a, b): a > b, as a tree of (greater, equal) pairs, three per
    -- node, so that a comparison of up to 27 bits is 3 LUT levels (a plain >
    -- becomes a ripple carry in synthesis). Bit p of gN, eN: a > b and a = b
    -- over the N bits up to p, worked out with whole-word operations; only
    -- the bits at the top of each group are used, which makes the tree.
    -- Narrower operands are zero-extended to 33 bits.
    function gt33(a_in : unsigned; b_in : unsigned) return std_ulogic is
        variable a, b : u33_t;
        variable g, e, g3, e3, g9, e9, g27, t : unsigned(35 downto 0);
    begin
        a := resize(a_in, 33);
        b := resize(b_in, 33);
        g := "000" & (a and not b);          -- padded with (0, 1): neutral on top
        e := "111" & not (a xor b);
        g3 := g or (e and (shift_left(g, 1) or (shift_left(e, 1) and shift_left(g, 2))));
        e3 := e and shift_left(e, 1) and shift_left(e, 2);
        g9 := g3 or (e3 and (shift_left(g3, 3) or (shift_left(e3, 3) and shift_left(g3, 6))));
        e9 := e3 and shift_left(e3, 3) and shift_left(e3, 6);
        g27 := g9 or (e9 and (shift_left(g9, 9) or (shift_left(e9, 9) and shift_left(g9, 18))));
        t := g9 or (e9 and shift_left(g27, 9));   -- bit 35: bits 27..35 over bits 0..26
        return t(35);
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
end package body rnic_pkg;
