-- rx_merge: two AXI4-Stream inputs into one output, whole frames, DATA_W
-- bits per clock, no storage: rnic_rx's merges of mpa_rx's and tuf_rx's
-- streams (pieces, exception segments, early ULPDUs).
--
-- VHDL-2008 twin of hw/rtl/rx_merge.v: same generics, same ports, same
-- registers, clock for clock the same (the Verilog header has the
-- details). A frame starts from whichever input has a beat waiting, from
-- the one the last frame did not come from when both do, and the choice
-- holds to the frame's tlast; the output is the chosen input as it is.

library ieee;
use ieee.std_logic_1164.all;

entity rx_merge is
    generic (
        DATA_W : natural := 64;
        USER_W : natural := 8
    );
    port (
        clk       : in  std_logic := '0';
        rst       : in  std_logic := '0';

        s0_tdata  : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s0_tkeep  : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s0_tvalid : in  std_logic := '0';
        s0_tready : out std_logic;
        s0_tlast  : in  std_logic := '0';
        s0_tuser  : in  std_logic_vector(USER_W - 1 downto 0) := (others => '0');

        s1_tdata  : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s1_tkeep  : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s1_tvalid : in  std_logic := '0';
        s1_tready : out std_logic;
        s1_tlast  : in  std_logic := '0';
        s1_tuser  : in  std_logic_vector(USER_W - 1 downto 0) := (others => '0');

        m_tdata   : out std_logic_vector(DATA_W - 1 downto 0);
        m_tkeep   : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_tvalid  : out std_logic;
        m_tready  : in  std_logic := '0';
        m_tlast   : out std_logic;
        m_tuser   : out std_logic_vector(USER_W - 1 downto 0)
    );
end entity rx_merge;

architecture rtl of rx_merge is
    signal inf_reg  : std_logic := '0';     -- inside a frame
    signal sel_reg  : std_logic := '0';     -- its input ('1': s1)
    signal last_reg : std_logic := '0';     -- the input of the last frame started
    signal pick     : std_logic;
    signal valid    : std_logic;
    signal last     : std_logic;
begin
    pick <= sel_reg when inf_reg = '1' else
            s1_tvalid and (not s0_tvalid or not last_reg);
    valid <= s1_tvalid when pick = '1' else s0_tvalid;
    last <= s1_tlast when pick = '1' else s0_tlast;

    m_tdata <= s1_tdata when pick = '1' else s0_tdata;
    m_tkeep <= s1_tkeep when pick = '1' else s0_tkeep;
    m_tvalid <= valid;
    m_tlast <= last;
    m_tuser <= s1_tuser when pick = '1' else s0_tuser;
    s0_tready <= not pick and m_tready;
    s1_tready <= pick and m_tready;

    p_sel : process (clk)
    begin
        if rising_edge(clk) then
            if valid = '1' and m_tready = '1' then
                inf_reg <= not last;
                sel_reg <= pick;
                if inf_reg = '0' then
                    last_reg <= pick;
                end if;
            end if;
            if rst = '1' then
                inf_reg <= '0';
                sel_reg <= '0';
                last_reg <= '0';
            end if;
        end if;
    end process p_sel;
end architecture rtl;
