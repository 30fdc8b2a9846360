-- ddp_rx_deliver: stage V0 of ddp_rx, delivery, and the status pulses.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_deliver.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_deliver is
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
        s_verdict_tdata : in std_logic_vector(2 downto 0);
        s_verdict_tvalid : in std_logic;
        s_conn_conn : in std_logic_vector(CONN_W - 1 downto 0);
        m_cpl_ready : in std_logic;
        m_err_ready : in std_logic;
        cx_rd_data : in cx_r(qs(3 * (32 + RQ_AW + 1) - 1 downto 0));
        cf_post_reg : in std_ulogic;
        c2_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        c2_first_reg : in std_ulogic;
        c2_early_reg : in std_ulogic;
        c_en : in std_ulogic;
        c2_go : in std_ulogic;
        b_valid : in std_ulogic;
        b_resp : in std_logic_vector(1 downto 0);
        rf_in_ready : in std_ulogic;
        rf_out_data : in rf_r(mark(BQ_AW + 2 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
        rf_out_valid : in std_ulogic;
        bq_out_data : in std_logic_vector(CONN_W - 1 downto 0);
        bq_out_valid : in std_ulogic;
        b_cnt_reg : in unsigned(BQ_AW + 3 - 1 downto 0);
        b_cnt1_reg : in unsigned(BQ_AW + 3 - 1 downto 0);
        d2_valid_reg : in std_ulogic;
        e2_last_reg : in std_ulogic;
        e2_early_reg : in std_ulogic;
        e2_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        cf_conn : in std_ulogic;
        o_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        o_qn_reg : in unsigned(1 downto 0);
        o_ent_reg : in std_ulogic_vector(rg_w(ADDR_W, ID_W) - 1 downto 0);
        o_ok : in std_ulogic;
        s_verdict_tready : out std_logic;
        m_axi_bready : out std_logic;
        m_cpl_valid : out std_logic;
        m_cpl_conn : out std_logic_vector(CONN_W - 1 downto 0);
        m_cpl_opcode : out std_logic_vector(3 downto 0);
        m_cpl_tagged : out std_logic;
        m_cpl_qn : out std_logic_vector(1 downto 0);
        m_cpl_msn : out std_logic_vector(31 downto 0);
        m_cpl_len : out std_logic_vector(31 downto 0);
        m_cpl_id : out std_logic_vector(ID_W - 1 downto 0);
        m_cpl_stag : out std_logic_vector(31 downto 0);
        m_cpl_inv_stag : out std_logic_vector(31 downto 0);
        m_cpl_rr : out std_logic_vector(223 downto 0);
        m_err_valid : out std_logic;
        m_err_conn : out std_logic_vector(CONN_W - 1 downto 0);
        m_err_layer : out std_logic_vector(3 downto 0);
        m_err_etype : out std_logic_vector(3 downto 0);
        m_err_code : out std_logic_vector(7 downto 0);
        m_drop_valid : out std_logic;
        m_drop_conn : out std_logic_vector(CONN_W - 1 downto 0);
        m_drop_reason : out std_logic_vector(1 downto 0);
        m_drop_first : out std_logic;
        m_drop_count : out std_logic_vector(31 downto 0);
        m_post_err_valid : out std_logic;
        m_post_err_conn : out std_logic_vector(CONN_W - 1 downto 0);
        m_post_err_qn : out std_logic_vector(1 downto 0);
        m_post_err_id : out std_logic_vector(ID_W - 1 downto 0);
        m_post_err_reason : out std_logic_vector(1 downto 0);
        m_berr_valid : out std_logic;
        m_berr_conn : out std_logic_vector(CONN_W - 1 downto 0);
        m_berr_resp : out std_logic_vector(1 downto 0);
        m_done_valid : out std_logic;
        m_done_conn : out std_logic_vector(CONN_W - 1 downto 0);
        herr_reg : out std_ulogic_vector(2 ** CONN_W - 1 downto 0) := (others => '0');
        herr_set : out std_ulogic := '0';
        herr_set_conn : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        rf_out_ready : out std_ulogic := '0';
        b_go : out std_ulogic := '0';
        rs_busy : out std_ulogic := '0';
        -- ddp_rx's te_ram read (ddp_rx_deliver.v).
        te_rd_en : out std_ulogic := '0';
        te_rd_conn : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        te_own : out std_ulogic := '0'
    );
end entity ddp_rx_deliver;

architecture rtl of ddp_rx_deliver is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    subtype rf_t is rf_r(mark(MK_W_c - 1 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);
    constant RF_ZERO_c : rf_t := rf_zero(CONN_W, ID_W, BQ_AW);

    signal dead_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');
    signal axi_bready : std_ulogic := '0';
    signal cpl_valid_reg : std_ulogic := '0';
    signal err_valid_reg : std_ulogic := '0';
    signal ev_conn_reg : conn_t := (others => '0');
    signal ev_rec_reg : rec_t := REC_ZERO_c;
    signal ev_rr_reg : rr_t := (others => '0');
    signal ev_err_reg : w16_t := (others => '0');
    -- V0: the oldest undelivered record, with its connection's dead and
    -- herr bits (see the Verilog), and the changes to those bits a clock ago.
    signal v0_valid_reg : std_ulogic := '0';
    signal v0_data_reg : rf_t := RF_ZERO_c;
    signal v0_dead_reg, v0_herr_reg : std_ulogic := '0';
    signal dl_set_reg : std_ulogic := '0';            -- a delivery set dead_reg(dl_conn_reg)
    signal dl_conn_reg : conn_t := (others => '0');
    signal hs_set_reg : std_ulogic := '0';            -- herr_set, a clock ago
    signal hs_conn_reg : conn_t := (others => '0');
    signal cc_clr_reg : std_ulogic := '0';            -- s_conn cleared both bits, a clock ago
    signal cc_conn_reg : conn_t := (others => '0');
    signal rf_en : std_ulogic := '0';
    signal rf_mark : mk_t := (others => '0');
    signal rf_conn : conn_t := (others => '0');
    signal rf_rec : rec_t := REC_ZERO_c;
    signal rf_kind : u2_t := (others => '0');
    signal rh_conn : conn_t := (others => '0');       -- rec_fifo's head
    signal rh_mark : mk_t := (others => '0');
    signal v0_clr, v0_dead, v0_herr : std_ulogic := '0';
    signal ev_free, dv_bdone, dv_go, b_hold : std_ulogic := '0';
    signal v0_bdone_reg, v0_bahead_reg : std_ulogic := '0';
    signal bd_h0, bd_h1, bd_v0, bd_v1 : mk_t := (others => '0');
    signal dv_del, dv_bad, dv_kills : std_ulogic := '0';
    -- Restarts (see the Verilog, ddp_rx_deliver.v): records queued (rec_fifo
    -- and V0), and those of the last restart's old stream still to deliver.
    signal rq_cnt_reg, rs_left_reg : unsigned(REC_AW downto 0) := (others => '0');
    signal rs_conn_reg : conn_t := (others => '0');
    signal rq_push, v0_stale, v0_cstale : std_ulogic := '0';
    signal drop_valid_reg : std_ulogic := '0';
    signal drop_conn_reg : conn_t := (others => '0');
    signal drop_first_reg : std_ulogic := '0';
    signal drop_count_reg : u32_t := (others => '0');
    signal perr_valid_reg : std_ulogic := '0';
    signal perr_conn_reg : conn_t := (others => '0');
    signal perr_qn_reg : u2_t := (others => '0');
    signal perr_id_reg : id_t := (others => '0');
    signal perr_reason_reg : u2_t := (others => '0');
    signal berr_valid_reg : std_ulogic := '0';
    signal berr_conn_reg : conn_t := (others => '0');
    signal berr_resp_reg : std_ulogic_vector(1 downto 0) := (others => '0');
    signal done_valid_reg : std_ulogic := '0';
    signal done_conn_reg : conn_t := (others => '0');

begin

    -- V0: the oldest undelivered record, taken from rec_fifo's head, with
    -- its connection's dead and herr bits looked up as it comes in (a clock
    -- of its own). The bits it holds then follow every change: the dead
    -- bits the deliveries set, the herr bits the B responses set and what
    -- s_conn clears, each registered (dl_*, hs_*, cc_*) and applied a clock
    -- after it is made, in the clock's order (a clear last); the lookup
    -- misses only the changes of the clock it is made in, which come in the
    -- same way.
    rf_en <= v0_data_reg.en;
    rf_mark <= v0_data_reg.mark;
    rf_conn <= v0_data_reg.conn;
    rf_rec <= v0_data_reg.rec;
    rf_kind <= rf_rec.kind;
    rh_conn <= rf_out_data.conn;
    rh_mark <= rf_out_data.mark;
    v0_clr <= cc_clr_reg and to_sl(cc_conn_reg = rf_conn);
    v0_dead <= (v0_dead_reg or (dl_set_reg and to_sl(dl_conn_reg = rf_conn))) and not v0_clr;
    v0_herr <= (v0_herr_reg or (hs_set_reg and to_sl(hs_conn_reg = rf_conn))) and not v0_clr;
    ev_free <= ((not cpl_valid_reg) or m_cpl_ready) and ((not err_valid_reg) or m_err_ready);
    -- A record waits for the B responses of every burst queued before it; an
    -- error response past V0's mark waits for V0's delivery. OKAY responses
    -- go on, up to 2**(MK_W-2) past that mark; while V0 is empty and a
    -- record is at rec_fifo's head, every response waits that clock. So
    -- b_cnt - mark stays within -2**BQ_AW .. 2**(MK_W-2) and its sign bit
    -- is the verdict on "reached" however long a record waits. V0's flags
    -- (>= 0, >= 2**(MK_W-2)) are registers made at the edge before from the
    -- four values b_cnt and the mark can take there (see the Verilog).
    bd_h0 <= b_cnt_reg - rh_mark;
    bd_h1 <= b_cnt1_reg - rh_mark;
    bd_v0 <= b_cnt_reg - rf_mark;
    bd_v1 <= b_cnt1_reg - rf_mark;
    dv_bdone <= v0_bdone_reg;
    dv_go <= v0_valid_reg and s_verdict_tvalid and ev_free and dv_bdone;
    b_hold <= sel(v0_valid_reg, dv_bdone and (v0_bahead_reg or b_resp(1)), rf_out_valid)
              and b_valid;
    rq_push <= d2_valid_reg and e2_last_reg and (not e2_early_reg) and rf_in_ready;
    rs_busy <= to_sl(rs_left_reg /= 0);
    v0_stale <= rs_busy and to_sl(rs_conn_reg = rf_conn);
    v0_cstale <= cf_conn and to_sl(s_conn_conn = rf_conn);
    -- A ULPDU of a connection that is not enabled reports nothing here
    -- (m_drop reported its pieces), whatever its verdict; nor a stale one.
    dv_del <= dv_go and (not v0_dead) and rf_en and not v0_stale;
    -- RFC 5044 8: an MPA error is fatal to the stream; a write's error
    -- response is an RDMAP Local Catastrophic Error (RFC 5040 7) in place of
    -- what the ULPDU would have reported; an error record and a Terminate
    -- end the stream.
    dv_bad <= to_sl(s_verdict_tdata /= "000");
    dv_kills <= dv_bad or v0_herr or to_sl(rf_kind = K_ERR_c) or to_sl(rf_kind = K_TERM_c);
    te_rd_en <= dv_del;
    te_rd_conn <= rf_conn;
    te_own <= not dv_bad and not v0_herr and to_sl(rf_kind = K_ERR_c) and not (rf_rec.tagged and rf_rec.inv_stag(0));

    b_go <= b_valid and bq_out_valid and not b_hold;
    herr_set <= b_go and b_resp(1);
    herr_set_conn <= bq_out_data;
    axi_bready <= bq_out_valid and not b_hold and to_sl(WR_REQ = 0);
    m_axi_bready <= axi_bready;

    rf_out_ready <= (not v0_valid_reg) or dv_go;
    s_verdict_tready <= dv_go;

    p_dv_reg : process (clk) is
        variable dead, herr : std_ulogic_vector(NCONN_c - 1 downto 0);
    begin
        if rising_edge(clk) then
            dead := dead_reg;
            herr := herr_reg;
            if rf_out_ready = '0' and b_go = '0' then
                v0_bdone_reg <= not bd_v0(MK_W_c - 1);
                v0_bahead_reg <= bd_v0(MK_W_c - 2);
            elsif rf_out_ready = '0' then
                v0_bdone_reg <= not bd_v1(MK_W_c - 1);
                v0_bahead_reg <= bd_v1(MK_W_c - 2);
            elsif b_go = '0' then
                v0_bdone_reg <= not bd_h0(MK_W_c - 1);
                v0_bahead_reg <= bd_h0(MK_W_c - 2);
            else
                v0_bdone_reg <= not bd_h1(MK_W_c - 1);
                v0_bahead_reg <= bd_h1(MK_W_c - 2);
            end if;
            if rf_out_ready = '1' then
                v0_valid_reg <= rf_out_valid;
                v0_data_reg <= rf_out_data;
                v0_dead_reg <= dead_reg(ci(rh_conn));
                v0_herr_reg <= herr_reg(ci(rh_conn));
            else
                v0_dead_reg <= v0_dead;
                v0_herr_reg <= v0_herr;
            end if;
            dl_set_reg <= dv_del and dv_kills;
            dl_conn_reg <= rf_conn;
            hs_set_reg <= herr_set;
            hs_conn_reg <= herr_set_conn;
            cc_clr_reg <= cf_conn;
            cc_conn_reg <= s_conn_conn;
            if cpl_valid_reg = '1' and m_cpl_ready = '1' then
                cpl_valid_reg <= '0';
            end if;
            if err_valid_reg = '1' and m_err_ready = '1' then
                err_valid_reg <= '0';
            end if;
            if dv_del = '1' then
                ev_conn_reg <= rf_conn;
                ev_rec_reg <= rf_rec;
                ev_rr_reg <= v0_data_reg.rr;
                if dv_bad = '1' then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= LAYER_LLP & ETYPE_MPA & "00000" & s_verdict_tdata;
                elsif v0_herr = '1' then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= ERR_RDMAP_LOCAL_CATASTROPHIC;
                elsif rf_kind = K_ERR_c then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= rf_rec.err;
                elsif rf_kind = K_CPL_c or rf_kind = K_TERM_c then
                    cpl_valid_reg <= not v0_cstale;
                end if;
                if dv_kills = '1' then
                    dead(ci(rf_conn)) := '1';
                end if;
            end if;
            if herr_set = '1' then
                herr(ci(herr_set_conn)) := '1';
            end if;
            if cf_conn = '1' then
                dead(ci(s_conn_conn)) := '0';
                herr(ci(s_conn_conn)) := '0';
            end if;
            if rq_push = '1' and dv_go = '0' then
                rq_cnt_reg <= rq_cnt_reg + 1;
            elsif rq_push = '0' and dv_go = '1' then
                rq_cnt_reg <= rq_cnt_reg - 1;
            end if;
            if cf_conn = '1' then
                -- (rs_left is 0 here: s_conn_ready waits for it; no push now.)
                if dv_go = '1' then
                    rs_left_reg <= rq_cnt_reg - 1;
                else
                    rs_left_reg <= rq_cnt_reg;
                end if;
                rs_conn_reg <= s_conn_conn;
            elsif dv_go = '1' and rs_busy = '1' then
                rs_left_reg <= rs_left_reg - 1;
            end if;
            if rst = '1' then
                rq_cnt_reg <= (others => '0');
                rs_left_reg <= (others => '0');
                v0_valid_reg <= '0';
                dl_set_reg <= '0';
                hs_set_reg <= '0';
                cc_clr_reg <= '0';
                cpl_valid_reg <= '0';
                err_valid_reg <= '0';
                dead := (others => '0');
                herr := (others => '0');
            end if;
            dead_reg <= dead;
            herr_reg <= herr;
        end if;
    end process p_dv_reg;

    p_status_reg : process (clk) is
    begin
        if rising_edge(clk) then
            -- A piece of a connection that is not enabled (C2 has its
            -- context); not an early one.
            drop_valid_reg <= c2_go and (not c_en) and not c2_early_reg;
            drop_conn_reg <= c2_conn_reg;
            drop_first_reg <= c2_first_reg;
            if c2_go = '1' and c_en = '0' and c2_early_reg = '0' then
                drop_count_reg <= drop_count_reg + 1;
            end if;
            -- A post not taken: a connection not enabled, QN 3, a full ring.
            perr_valid_reg <= cf_post_reg and not o_ok;
            perr_conn_reg <= o_conn_reg;
            perr_qn_reg <= o_qn_reg;
            perr_id_reg <= o_ent_reg(ID_W - 1 downto 0);
            if cx_rd_data.en = '0' then
                perr_reason_reg <= "11";
            elsif o_qn_reg = 3 then
                perr_reason_reg <= "10";
            else
                perr_reason_reg <= "01";
            end if;
            berr_valid_reg <= b_go and b_resp(1);
            berr_conn_reg <= bq_out_data;
            berr_resp_reg <= b_resp;
            -- A ULPDU's last piece has left placement: all its writes are queued.
            done_valid_reg <= d2_valid_reg and e2_last_reg and (e2_early_reg or rf_in_ready);
            done_conn_reg <= e2_conn_reg;
            if rst = '1' then
                drop_valid_reg <= '0';
                drop_count_reg <= (others => '0');
                perr_valid_reg <= '0';
                berr_valid_reg <= '0';
                done_valid_reg <= '0';
            end if;
        end if;
    end process p_status_reg;

    m_drop_valid <= drop_valid_reg;
    m_drop_conn <= drop_conn_reg;
    m_drop_reason <= "01";
    m_drop_first <= drop_first_reg;
    m_drop_count <= std_logic_vector(drop_count_reg);
    m_post_err_valid <= perr_valid_reg;
    m_post_err_conn <= perr_conn_reg;
    m_post_err_qn <= std_logic_vector(perr_qn_reg);
    m_post_err_id <= perr_id_reg;
    m_post_err_reason <= std_logic_vector(perr_reason_reg);
    m_berr_valid <= berr_valid_reg;
    m_berr_conn <= berr_conn_reg;
    m_berr_resp <= berr_resp_reg;
    m_done_valid <= done_valid_reg;
    m_done_conn <= done_conn_reg;

    -- m_cpl: opcode & tagged & qn & msn & len & id & stag & inv_stag =
    -- ev_rec(RECC_W - 3 downto 16).
    m_cpl_valid <= cpl_valid_reg;
    m_cpl_conn <= ev_conn_reg;
    m_cpl_opcode <= ev_rec_reg.opcode;
    m_cpl_tagged <= ev_rec_reg.tagged;
    m_cpl_qn <= ev_rec_reg.qn;
    m_cpl_msn <= ev_rec_reg.msn;
    m_cpl_len <= ev_rec_reg.len;
    m_cpl_id <= ev_rec_reg.id;
    m_cpl_stag <= ev_rec_reg.stag;
    m_cpl_inv_stag <= ev_rec_reg.inv_stag;
    m_cpl_rr <= ev_rr_reg;
    m_err_valid <= err_valid_reg;
    m_err_conn <= ev_conn_reg;
    m_err_layer <= ev_err_reg(15 downto 12);
    m_err_etype <= ev_err_reg(11 downto 8);
    m_err_code <= ev_err_reg(7 downto 0);

end architecture rtl;
