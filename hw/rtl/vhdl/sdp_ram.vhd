-- sdp_ram: simple dual-port RAM, one write port and one registered read
-- port, 2**ADDR_W words of WIDTH bits.
--
-- VHDL-2008 twin of hw/rtl/sdp_ram.v: same generics and ports, same timing.
-- A read and a write of the same address at the same clock edge return the
-- old word: callers that need the new one bypass the RAM themselves.
-- rd_en low holds rd_data. The contents start at zero in simulation (on an
-- FPGA, undefined).
--
-- LUTRAM = 1 asks for distributed RAM (ram_style "distributed") where an
-- FPGA tool would take a block RAM, for narrow tables whose read word
-- starts a long path (sdp_ram.v says why). The behaviour is the same.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity sdp_ram is
    generic (
        WIDTH  : natural := 8;
        ADDR_W : natural := 10;
        LUTRAM : natural := 0
    );
    port (
        clk     : in  std_logic := '0';

        wr_en   : in  std_logic := '0';
        wr_addr : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        wr_data : in  std_logic_vector(WIDTH - 1 downto 0) := (others => '0');

        rd_en   : in  std_logic := '0';
        rd_addr : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        rd_data : out std_logic_vector(WIDTH - 1 downto 0)
    );
end entity sdp_ram;

architecture rtl of sdp_ram is

    subtype word_t is std_ulogic_vector(WIDTH - 1 downto 0);
    type mem_t is array (0 to 2 ** ADDR_W - 1) of word_t;

    function ram_style_for(lut : natural) return string is
    begin
        if lut /= 0 then
            return "distributed";
        end if;
        return "block";
    end function ram_style_for;

    signal mem : mem_t := (others => (others => '0'));
    attribute ram_style : string;
    attribute ram_style of mem : signal is ram_style_for(LUTRAM);
    signal rd_data_reg : word_t := (others => '0');

begin

    rd_data <= rd_data_reg;

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if wr_en = '1' then
                mem(to_integer(unsigned(wr_addr))) <= wr_data;
            end if;
            if rd_en = '1' then
                rd_data_reg <= mem(to_integer(unsigned(rd_addr)));
            end if;
        end if;
    end process p_reg;

end architecture rtl;
