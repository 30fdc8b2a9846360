-- smoke_counter: WIDTH-bit up-counter with a count enable.
--
-- VHDL-2008 twin of hw/rtl/smoke_counter.v, with the same ports and generic,
-- so that one cocotb testbench drives both. It exists to prove the HDL
-- toolchain end to end.
--
-- Behaviour: on each rising edge of clk, rst (synchronous, active high) clears
-- the count; otherwise the count increments by one, modulo 2**WIDTH, when en
-- is high and holds when en is low.
--
-- Latency: 1 clock. count is driven straight from a register, so an en (or
-- rst) sampled at one rising edge is visible on count after that edge.
-- Throughput: one increment per clock.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity smoke_counter is
    generic (
        WIDTH : positive := 8
    );
    port (
        clk   : in  std_logic := '0';
        rst   : in  std_logic := '0';
        en    : in  std_logic := '0';
        count : out std_logic_vector(WIDTH - 1 downto 0)
    );
end entity smoke_counter;

architecture rtl of smoke_counter is
    signal count_reg : unsigned(WIDTH - 1 downto 0) := (others => '0');
begin

    count <= std_logic_vector(count_reg);

    p_count : process (clk) is
    begin
        if rising_edge(clk) then
            if en = '1' then
                count_reg <= count_reg + 1;
            end if;

            -- Synchronous reset as an override after the normal update.
            if rst = '1' then
                count_reg <= (others => '0');
            end if;
        end if;
    end process p_count;

end architecture rtl;
