-- ddp_rx_intake: ddp_rx's intake stage.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_intake.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_intake is
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
        s_axis_tdata : in std_logic_vector(DATA_W - 1 downto 0);
        s_axis_tkeep : in std_logic_vector(DATA_W / 8 - 1 downto 0);
        s_axis_tvalid : in std_logic;
        s_axis_tlast : in std_logic;
        s_axis_tuser : in std_logic_vector(CONN_W + 19 - 1 downto 0);
        s_conn_valid : in std_logic;
        s_stag_valid : in std_logic;
        s_post_valid : in std_logic;
        cf_post_reg : in std_ulogic;
        clr_busy_reg : in std_ulogic;
        df_out_ready : in std_ulogic;
        c_adv : in std_ulogic;
        s_axis_tready : out std_logic;
        i_inpiece_reg : out std_ulogic := '0';
        df_out : out df_r(data(DATA_W - 1 downto 0), keep(DATA_W / 8 - 1 downto 0)) := df_zero(DATA_W);
        df_out_valid : out std_ulogic := '0';
        hf_out_valid : out std_ulogic := '0';
        h_valid : out std_ulogic := '0';
        h_rec : out hf_r(conn(CONN_W - 1 downto 0)) := hf_zero(CONN_W)
    );
end entity ddp_rx_intake;

architecture rtl of ddp_rx_intake is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype hf_t is hf_r(conn(CONN_W - 1 downto 0));
    subtype df_t is df_r(data(DATA_W - 1 downto 0), keep(KEEP_W_c - 1 downto 0));
    constant HF_ZERO_c : hf_t := hf_zero(CONN_W);
    constant DF_ZERO_c : df_t := df_zero(DATA_W);

    signal cfg_pending   : std_ulogic := '0';
    signal i_hcnt_reg    : u2_t := (others => '0');   -- header beats taken (saturates at HB)
    signal i_hdone_reg   : std_ulogic := '0';      -- the piece's header record is out
    signal i_hdr_reg     : hdr_t := (others => '0');
    signal i_user_reg    : std_ulogic_vector(17 + CONN_W downto 0) := (others => '0');   -- early & ulen & conn & first
    signal df_in_ready, hf_in_ready : std_ulogic := '0';
    signal i_hold, s_ready, i_take, i_early, i_ulast, i_hdone : std_ulogic := '0';
    signal i_user : std_ulogic_vector(17 + CONN_W downto 0) := (others => '0');
    signal i_hcnt : u2_t := (others => '0');
    signal i_hdr : hdr_t := (others => '0');
    signal i_hpush : std_ulogic := '0';
    -- The payload length, n = ulen - header length (14 or 18 octets by the
    -- T bit, octet 0 bit 7: RFC 5041 4.2, 4.3), and short = ulen < header
    -- length, from the first beat's tuser and T, kept for the later beats.
    signal i_ulen_t : u16_t := (others => '0');
    signal i_n14_t, i_n18_t : u33_t := (others => '0');
    signal i_t_t : std_ulogic := '0';
    signal i_ns_t : u17_t := (others => '0');
    signal i_ns_reg : u17_t := (others => '0');        -- short & n
    signal i_ns : u17_t := (others => '0');
    signal i_drop_reg, i_drop0, i_drop : std_ulogic := '0';
    signal df_in_data : df_t := DF_ZERO_c;
    signal hf_in_data : hf_t := HF_ZERO_c;
    signal df_out_bits : std_logic_vector(DF_W_c - 1 downto 0) := (others => '0');
    signal hf_out : std_logic_vector(HF_W_c - 1 downto 0) := (others => '0');
    signal h_thru : std_ulogic := '0';

begin

    cfg_pending <= s_conn_valid or s_stag_valid or s_post_valid or cf_post_reg;

    -- Configuration waits for the pipeline to drain and is taken between
    -- pieces: no new piece starts while one is waiting.
    i_hold <= (not i_inpiece_reg) and (cfg_pending or clr_busy_reg);
    s_ready <= df_in_ready and hf_in_ready and not i_hold;
    s_axis_tready <= s_ready;
    i_take <= s_axis_tvalid and s_ready;

    -- An early piece is a whole ULPDU: first and last whatever tuser says.
    i_early <= s_axis_tuser(CONN_W + 18);
    i_user <= i_user_reg when i_inpiece_reg = '1'
              else s_axis_tuser(CONN_W + 18 downto 2) & (s_axis_tuser(1) or i_early);
    i_ulast <= s_axis_tuser(0) or sel(i_inpiece_reg, i_user_reg(17 + CONN_W), i_early);
    i_hcnt <= i_hcnt_reg when i_inpiece_reg = '1' else "00";
    i_hdone <= i_inpiece_reg and i_hdone_reg;

    i_ulen_t <= unsigned(s_axis_tuser(CONN_W + 17 downto CONN_W + 2));
    i_n14_t <= fadd(resize(i_ulen_t, 32), x"0000fff1", '1');
    i_n18_t <= fadd(resize(i_ulen_t, 32), x"0000ffed", '1');
    i_t_t <= s_axis_tdata(7);
    i_ns_t <= to_sl(i_ulen_t < 14) & i_n14_t(15 downto 0) when i_t_t = '1'
              else to_sl(i_ulen_t < 18) & i_n18_t(15 downto 0);
    i_ns <= i_ns_reg when i_inpiece_reg = '1' else i_ns_t;
    -- Beat 0 of a first piece that goes on (W=64): header only, so it goes
    -- into the header record but not into df_fifo; the record says so
    -- (drop) and placement counts the piece from its beat 1 (C1's h_hlen).
    i_drop0 <= to_sl(DROP0_c /= 0) and (not i_inpiece_reg) and i_user(0) and (not s_axis_tlast);
    i_drop <= i_drop_reg when i_inpiece_reg = '1' else i_drop0;

    p_intake_hdr : process (all) is
        variable h : hdr_t;
    begin
        if i_inpiece_reg = '1' then
            h := i_hdr_reg;
        else
            h := (others => '0');
        end if;
        for o in 0 to 17 loop
            if to_integer(i_hcnt) = o / KEEP_W_c then
                h(8 * o + 7 downto 8 * o) := s_axis_tdata(8 * (o mod KEEP_W_c) + 7 downto 8 * (o mod KEEP_W_c));
            end if;
        end loop;
        i_hdr <= h;
        -- A later piece's record goes out with its first beat; a first
        -- piece's once its header is in (or at its end, if shorter): 18
        -- octets, or 14 when it is tagged (T, octet 0 bit 7; octets 14..17
        -- of the record are then payload or zero, and no check of a
        -- tagged segment reads them).
        i_hpush <= i_take and (not i_hdone)
                   and ((not i_user(0)) or s_axis_tlast or to_sl(to_integer(i_hcnt) = HB_c - 1)
                        or (h(7) and to_sl(to_integer(i_hcnt) = HBT_c - 1)));
    end process p_intake_hdr;

    p_intake : process (clk) is
    begin
        if rising_edge(clk) then
            if i_take = '1' then
                i_inpiece_reg <= not s_axis_tlast;
                i_user_reg <= i_user;
                i_hdr_reg <= i_hdr;
                if to_integer(i_hcnt) = HB_c then
                    i_hcnt_reg <= i_hcnt;
                else
                    i_hcnt_reg <= i_hcnt + 1;
                end if;
                i_hdone_reg <= i_hdone or i_hpush;
                i_ns_reg <= i_ns;
                i_drop_reg <= i_drop;
            end if;
            if rst = '1' then
                i_inpiece_reg <= '0';
                i_hcnt_reg <= "00";
                i_hdone_reg <= '0';
            end if;
        end if;
    end process p_intake;

    df_in_data <= (data => s_axis_tdata, keep => s_axis_tkeep, tlast => s_axis_tlast, ulast => i_ulast);

    df_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => DF_W_c, AW => 4)
        port map (
            clk => clk, rst => rst,
            in_data => to_slv(df_in_data), in_valid => i_take and not i_drop0, in_ready => df_in_ready,
            in_data2 => to_slv(df_in_data), in_valid2 => '0', in_ready2 => open,
            out_data => df_out_bits, out_valid => df_out_valid, out_ready => df_out_ready
        );

    df_out <= to_df(df_out_bits, DATA_W);

    -- i_user is early & ulen & conn & first.
    hf_in_data <= (drop => i_drop, early => i_user(17 + CONN_W), short => i_ns(16), n => i_ns(15 downto 0),
                   ulen => i_user(16 + CONN_W downto 1 + CONN_W), conn => i_user(CONN_W downto 1),
                   first => i_user(0), hdr => i_hdr);

    -- The record of the piece at H: hf_fifo's head, or, when hf_fifo is
    -- empty and the check pipeline moves, the record being made (h_thru:
    -- it goes straight on to C1 and never into hf_fifo, a clock saved).
    h_thru <= i_hpush and (not hf_out_valid) and c_adv;
    h_valid <= hf_out_valid or i_hpush;
    h_rec <= to_hf(hf_out, CONN_W) when hf_out_valid = '1' else hf_in_data;

    hf_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => HF_W_c, AW => 3)
        port map (
            clk => clk, rst => rst,
            in_data => to_slv(hf_in_data), in_valid => i_hpush and not h_thru, in_ready => hf_in_ready,
            in_data2 => to_slv(hf_in_data), in_valid2 => '0', in_ready2 => open,
            out_data => hf_out, out_valid => hf_out_valid, out_ready => c_adv
        );

end architecture rtl;
