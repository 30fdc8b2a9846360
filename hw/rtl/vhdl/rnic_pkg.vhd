-- rnic_pkg: small elaboration-time helpers the VHDL-2008 twins share
-- (the Verilog uses $clog2 and inline expressions for the same).
--
-- Build order: this package is analysed before the entities that use it
-- (tests/hdlsim.py puts every hw/rtl/vhdl/*_pkg.vhd first; the Makefile's
-- GHDL lint imports every file and elaborates only the entities).

library ieee;
use ieee.std_logic_1164.all;

package rnic_pkg is
    -- ceil(log2(n)): bits to count 0 .. n-1 (0 for n = 1).
    function clog2(n : positive) return natural;
    function imin(a : integer; b : integer) return integer;
    function to_sl(b : boolean) return std_ulogic;
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
end package body rnic_pkg;
