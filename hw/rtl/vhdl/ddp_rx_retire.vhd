-- ddp_rx_retire: stages D2 to D4 of ddp_rx's placement, the end of a
-- placed piece.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_retire.v: the same ports (D1's piece end
-- as the record pe, ddp_rx_pkg's pe_r), registers and clock counts (the
-- Verilog has the design in full; ddp_rx_place.vhd instantiates this stage
-- once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.ddp_rx_pkg.all;

entity ddp_rx_retire is
    generic (
        DATA_W  : natural := 64;
        CONN_W  : natural := 10;
        STAG_AW : natural := 12;
        RQ_AW   : natural := 3;
        ADDR_W  : natural := 64;
        ID_W    : natural := 32;
        BURST   : natural := 8;
        REC_AW  : natural := 3;
        BQ_AW   : natural := 4;
        AXI_W   : natural := DATA_W; -- the host write port: DATA_W or 2 DATA_W
        WR_REQ  : natural := 0       -- 1: the write-request stream m_wr_* in its place
    );
    port (
        clk : in std_logic;
        rst : in std_logic;
        rf_in_ready : in std_ulogic;
        d_end_w : in std_ulogic;                 -- D1 ends its piece this clock
        pe : in pe_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
        d2_free : out std_ulogic := '0';
        d2_valid_reg : out std_ulogic := '0';
        d3_valid_reg : out std_ulogic := '0';
        d4_valid_reg : out std_ulogic := '0';
        e2_last_reg : out std_ulogic := '0';
        e2_en_reg : out std_ulogic := '0';
        e2_early_reg : out std_ulogic := '0';
        e2_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        e2_rec_reg : out rec_r(id(ID_W - 1 downto 0)) := rec_zero(ID_W);
        e2_rr_reg : out std_ulogic_vector(223 downto 0) := (others => '0');
        e4_place_reg : out std_ulogic := '0';
        e4_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        e4_rec_reg : out rec_r(id(ID_W - 1 downto 0)) := rec_zero(ID_W);
        e4_rr_reg : out std_ulogic_vector(223 downto 0) := (others => '0');
        e4_nxt : out unsigned(ADDR_W - 1 downto 0) := (others => '0');
        e4_left : out unsigned(15 downto 0) := (others => '0')
    );
end entity ddp_rx_retire;

architecture rtl of ddp_rx_retire is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);

    signal e2_place_reg : std_ulogic := '0';
    signal e2_dest_reg : addr_t := (others => '0');
    signal e2_s_reg : u5_t := (others => '0');
    signal e2_octs_reg : u17_t := (others => '0');
    signal e2_remain_reg : u16_t := (others => '0');
    signal e2_diff : u33_t := (others => '0');            -- octs >= s & octs - s
    signal d2_done : std_ulogic := '0';
    signal e3_place_reg, e3_pos_reg : std_ulogic := '0';
    signal e3_conn_reg : conn_t := (others => '0');
    signal e3_dest_reg : addr_t := (others => '0');
    signal e3_remain_reg : u16_t := (others => '0');
    signal e3_diff_reg : u17_t := (others => '0');
    signal e3_rec_reg : rec_t := REC_ZERO_c;
    signal e3_rr_reg : rr_t := (others => '0');
    signal e3_hi1 : unsigned(ADDR_W - 18 downto 0) := (others => '0');
    signal e3_rd : u33_t := (others => '0');
    signal e4_pos_reg, e4_big_reg : std_ulogic := '0';
    signal e4_dest_reg : addr_t := (others => '0');
    signal e4_hi1_reg : unsigned(ADDR_W - 18 downto 0) := (others => '0');
    signal e4_nd_reg, e4_nr_reg : u33_t := (others => '0');   -- (bits 17..0 used)
    signal e4_remain_reg, e4_rd_reg : u16_t := (others => '0');

begin

    -- D2: the piece's end. An early ULPDU has no delivery record (and takes
    -- no verdict).
    d2_done <= d2_valid_reg and ((not e2_last_reg) or e2_early_reg or rf_in_ready);
    d2_free <= (not d2_valid_reg) or d2_done;

    e2_diff <= fadd(resize(e2_octs_reg, 32), (31 downto 5 => '1') & not e2_s_reg, '1');

    -- D3, for a piece that does not end its ULPDU: the payload octets it
    -- placed, pay = min(max(octs - s, 0), remain), and where the next piece
    -- of the ULPDU goes on (dest + pay). D3 works out the sums (the low 17
    -- bits of dest + diff and dest + remain with their carries, remain -
    -- diff, diff > remain, and dest's high bits + 1), D4 picks them and
    -- writes the placement context.
    e3_hi1 <= resize(inc64(resize(e3_dest_reg(ADDR_W - 1 downto 17), 64)), ADDR_W - 17);
    e3_rd <= fadd(resize(e3_remain_reg, 32), (31 downto 17 => '1') & not e3_diff_reg, '1');

    p_e4 : process (all) is
        variable nxt : addr_t;
        variable left : u16_t;
    begin
        nxt := e4_dest_reg;
        left := e4_remain_reg;
        if e4_pos_reg = '1' and e4_big_reg = '1' then
            if e4_nr_reg(17) = '1' then
                nxt := e4_hi1_reg & e4_nr_reg(16 downto 0);
            else
                nxt := e4_dest_reg(ADDR_W - 1 downto 17) & e4_nr_reg(16 downto 0);
            end if;
            left := (others => '0');
        elsif e4_pos_reg = '1' then
            if e4_nd_reg(17) = '1' then
                nxt := e4_hi1_reg & e4_nd_reg(16 downto 0);
            else
                nxt := e4_dest_reg(ADDR_W - 1 downto 17) & e4_nd_reg(16 downto 0);
            end if;
            left := e4_rd_reg;
        end if;
        if e4_place_reg = '0' then
            nxt := e4_dest_reg;
        end if;
        e4_nxt <= nxt;
        e4_left <= left;
    end process p_e4;

    p_e3_reg : process (clk) is
    begin
        if rising_edge(clk) then
            d3_valid_reg <= d2_done and not e2_last_reg;
            e3_place_reg <= e2_place_reg;
            e3_pos_reg <= e2_diff(32) and to_sl(e2_diff(16 downto 0) /= 0);
            e3_conn_reg <= e2_conn_reg;
            e3_dest_reg <= e2_dest_reg;
            e3_remain_reg <= e2_remain_reg;
            e3_diff_reg <= e2_diff(16 downto 0);
            e3_rec_reg <= e2_rec_reg;
            e3_rr_reg <= e2_rr_reg;
            d4_valid_reg <= d3_valid_reg;
            e4_place_reg <= e3_place_reg;
            e4_pos_reg <= e3_pos_reg;
            e4_big_reg <= gt33(resize(e3_diff_reg, 33), resize(e3_remain_reg, 33));
            e4_conn_reg <= e3_conn_reg;
            e4_dest_reg <= e3_dest_reg;
            e4_hi1_reg <= e3_hi1;
            e4_nd_reg <= fadd(resize(e3_dest_reg(16 downto 0), 32), resize(e3_diff_reg, 32), '0');
            e4_nr_reg <= fadd(resize(e3_dest_reg(16 downto 0), 32), resize(e3_remain_reg, 32), '0');
            e4_remain_reg <= e3_remain_reg;
            e4_rd_reg <= e3_rd(15 downto 0);
            e4_rec_reg <= e3_rec_reg;
            e4_rr_reg <= e3_rr_reg;
            if rst = '1' then
                d3_valid_reg <= '0';
                d4_valid_reg <= '0';
            end if;
        end if;
    end process p_e3_reg;

    p_e2_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if d_end_w = '1' then
                d2_valid_reg <= '1';
                e2_last_reg <= pe.last;
                e2_en_reg <= pe.en;
                e2_early_reg <= pe.early;
                e2_place_reg <= pe.place;
                e2_conn_reg <= pe.conn;
                e2_dest_reg <= pe.dest;
                e2_s_reg <= pe.s;
                e2_octs_reg <= pe.octs;
                e2_remain_reg <= pe.remain;
                e2_rec_reg <= pe.rec;
                e2_rr_reg <= pe.rr;
            elsif d2_done = '1' then
                d2_valid_reg <= '0';
            end if;
            if rst = '1' then
                d2_valid_reg <= '0';
            end if;
        end if;
    end process p_e2_reg;

end architecture rtl;
