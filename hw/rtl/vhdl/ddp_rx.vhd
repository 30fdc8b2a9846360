-- ddp_rx: DDP/RDMAP receive placement, DATA_W bits per clock.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx.v: same generics, same ports, same
-- registers and clock counts, so tests/ddp_rx/test_ddp_rx.py drives both
-- (the Verilog header has the interface, the order of the checks, the
-- structure and the figures in full). Like the Verilog, this is the top of
-- the stage entities, hw/rtl/vhdl/ddp_rx_<stage>.vhd (the same stages, port
-- names and registers as hw/rtl/ddp_rx_<stage>.v), with the records that
-- pass between them (hw/rtl/vhdl/ddp_rx_pkg.vhd) in place of vectors with
-- fields at offsets. In brief:
--
-- Takes the ULPDUs (DDP Segments) that mpa_rx finds, as pieces (s_axis,
-- tuser = early & ulpdu_len(15 downto 0) & conn & first & last), checks
-- each one's DDP header (RFC 5041 4, 7.1) and RDMAP control (RFC 5040) the
-- way iwarp/verbs' receive path does, writes the payload of every segment
-- that passes into host memory through an AXI4 write master (m_axi_*: INCR
-- bursts of at most BURST beats, aligned to BURST beats, byte strobes
-- exact; B responses checked, an error response is the stream's Local
-- Catastrophic Error), and reports completions (m_cpl) and errors (m_err)
-- in each connection's stream order once MPA's verdict (s_verdict) on the
-- ULPDU is good. Early ULPDUs (tuser's early bit) are placed before their
-- turn if every check but the last segment's order passes, and change or
-- report nothing else.
--
-- Configuration, taken between pieces once the pipeline is empty (priority
-- conn > stag > post): s_conn (re)starts a connection (at any time: the
-- old stream's ULPDUs delivered after it report nothing); s_stag writes an
-- STag entry (and cuts a ULPDU in pieces that places through it: its
-- later pieces place nothing, it reports Invalid STag, its stream ends);
-- s_post posts a receive buffer at the tail of a queue's ring (refused
-- posts are reported on m_post_err). s_conn and s_stag also wait until
-- every write placed before them is taken and answered (the fence). Status pulses (one clock, no
-- ready): m_drop (a piece of a connection that is not enabled, and
-- m_drop_count), m_post_err, m_berr (an error B response), m_done (a
-- ULPDU's last piece has left placement).
--
-- Structure: intake (every beat into df_fifo but, at W=64, a first
-- piece's beat 0 of header octets only; a header record per piece into
-- hf_fifo); H (context, STag entry and posted buffer read from their
-- sdp_rams, for hf_fifo's head or, when it is empty and the checks move,
-- for the record in the clock it is made, which then skips hf_fifo), C1
-- (classification and the checks' arithmetic: the first clock of the
-- sums, sum72a, carry-save, sumeq), C1b (the sums' second clock, sum72b,
-- and the comparisons), C2 (the decision, with the effects
-- of the three decisions ahead that the table reads missed, and its
-- effects written back); placement D0 (set-up: rotation, window,
-- first address), D1 (one input beat a clock, rotated to the host
-- address, AW and W queued; a piece loaded while D1 is idle whose first
-- input beat writes nothing takes that beat with the load; W beats go
-- once their AW is valid, AXI4 A3.3.1), D2 (the piece's end, the delivery record),
-- D3, D4 (where a ULPDU's next piece goes on: the sums, then the pick and
-- the placement context's write); delivery in the order of last
-- pieces, gated by the verdicts and the B responses.
--
-- Verification: tests/ddp_rx/test_ddp_rx.py, every expected value from the
-- Go stack through cmd/rnic-oracle.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx is
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
        clk                : in  std_logic := '0';
        rst                : in  std_logic := '0';

        s_axis_tdata       : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep       : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid      : in  std_logic := '0';
        s_axis_tready      : out std_logic;
        s_axis_tlast       : in  std_logic := '0';
        s_axis_tuser       : in  std_logic_vector(CONN_W + 19 - 1 downto 0) := (others => '0');

        s_verdict_tdata    : in  std_logic_vector(2 downto 0) := (others => '0');
        s_verdict_tuser    : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_verdict_tvalid   : in  std_logic := '0';
        s_verdict_tready   : out std_logic;

        s_conn_valid       : in  std_logic := '0';
        s_conn_ready       : out std_logic;
        s_conn_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_conn_enable      : in  std_logic := '0';
        s_conn_pd          : in  std_logic_vector(31 downto 0) := (others => '0');

        s_stag_valid       : in  std_logic := '0';
        s_stag_ready       : out std_logic;
        s_stag_index       : in  std_logic_vector(STAG_AW - 1 downto 0) := (others => '0');
        s_stag_entry_valid : in  std_logic := '0';
        s_stag_key         : in  std_logic_vector(7 downto 0) := (others => '0');
        s_stag_pd          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_stag_bound       : in  std_logic := '0';
        s_stag_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_stag_access      : in  std_logic_vector(1 downto 0) := (others => '0');
        s_stag_base        : in  std_logic_vector(63 downto 0) := (others => '0');
        s_stag_len         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_stag_addr        : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');

        s_post_valid       : in  std_logic := '0';
        s_post_ready       : out std_logic;
        s_post_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_post_qn          : in  std_logic_vector(1 downto 0) := (others => '0');
        s_post_addr        : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        s_post_len         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_post_id          : in  std_logic_vector(ID_W - 1 downto 0) := (others => '0');

        m_axi_awid         : out std_logic_vector(0 downto 0);
        m_axi_awaddr       : out std_logic_vector(ADDR_W - 1 downto 0);
        m_axi_awlen        : out std_logic_vector(7 downto 0);
        m_axi_awsize       : out std_logic_vector(2 downto 0);
        m_axi_awburst      : out std_logic_vector(1 downto 0);
        m_axi_awcache      : out std_logic_vector(3 downto 0);
        m_axi_awprot       : out std_logic_vector(2 downto 0);
        m_axi_awvalid      : out std_logic;
        m_axi_awready      : in  std_logic := '0';
        m_axi_wdata        : out std_logic_vector(AXI_W - 1 downto 0);
        m_axi_wstrb        : out std_logic_vector(AXI_W / 8 - 1 downto 0);
        m_axi_wlast        : out std_logic;
        m_axi_wvalid       : out std_logic;
        m_axi_wready       : in  std_logic := '0';
        m_axi_bid          : in  std_logic_vector(0 downto 0) := (others => '0');
        m_axi_bresp        : in  std_logic_vector(1 downto 0) := (others => '0');
        m_axi_bvalid       : in  std_logic := '0';
        m_axi_bready       : out std_logic;

        m_wr_addr          : out std_logic_vector(ADDR_W - 1 downto 0);
        m_wr_data          : out std_logic_vector(AXI_W - 1 downto 0);
        m_wr_strb          : out std_logic_vector(AXI_W / 8 - 1 downto 0);
        m_wr_last          : out std_logic;
        m_wr_valid         : out std_logic;
        m_wr_ready         : in  std_logic := '0';

        m_cpl_valid        : out std_logic;
        m_cpl_ready        : in  std_logic := '0';
        m_cpl_conn         : out std_logic_vector(CONN_W - 1 downto 0);
        m_cpl_opcode       : out std_logic_vector(3 downto 0);
        m_cpl_tagged       : out std_logic;
        m_cpl_qn           : out std_logic_vector(1 downto 0);
        m_cpl_msn          : out std_logic_vector(31 downto 0);
        m_cpl_len          : out std_logic_vector(31 downto 0);
        m_cpl_id           : out std_logic_vector(ID_W - 1 downto 0);
        m_cpl_stag         : out std_logic_vector(31 downto 0);
        m_cpl_inv_stag     : out std_logic_vector(31 downto 0);
        m_cpl_rr           : out std_logic_vector(223 downto 0);

        m_err_valid        : out std_logic;
        m_err_ready        : in  std_logic := '0';
        m_err_conn         : out std_logic_vector(CONN_W - 1 downto 0);
        m_err_layer        : out std_logic_vector(3 downto 0);
        m_err_etype        : out std_logic_vector(3 downto 0);
        m_err_code         : out std_logic_vector(7 downto 0);
        -- What the Terminate copies (RFC 5040 4.8; ddp_rx.v's m_err):
        -- {M, D}, the ULPDU's length with M, its DDP header with D.
        m_err_hdrct        : out std_logic_vector(1 downto 0);
        m_err_seglen       : out std_logic_vector(15 downto 0);
        m_err_hdr          : out std_logic_vector(143 downto 0);

        -- Status pulses (one clock each, no ready: sample them every clock).
        m_drop_valid       : out std_logic;
        m_drop_conn        : out std_logic_vector(CONN_W - 1 downto 0);
        m_drop_reason      : out std_logic_vector(1 downto 0);
        m_drop_first       : out std_logic;
        m_drop_count       : out std_logic_vector(31 downto 0);
        m_post_err_valid   : out std_logic;
        m_post_err_conn    : out std_logic_vector(CONN_W - 1 downto 0);
        m_post_err_qn      : out std_logic_vector(1 downto 0);
        m_post_err_id      : out std_logic_vector(ID_W - 1 downto 0);
        m_post_err_reason  : out std_logic_vector(1 downto 0);
        m_berr_valid       : out std_logic;
        m_berr_conn        : out std_logic_vector(CONN_W - 1 downto 0);
        m_berr_resp        : out std_logic_vector(1 downto 0);
        m_done_valid       : out std_logic;
        m_done_conn        : out std_logic_vector(CONN_W - 1 downto 0)
    );
end entity ddp_rx;

architecture rtl of ddp_rx is

    function is_pow2(n : natural) return boolean is
        variable p : natural := 1;
    begin
        while p < n loop
            p := p * 2;
        end loop;
        return p = n;
    end function is_pow2;

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "ddp_rx: DATA_W must be 64, 128, 256 or 512, got " & integer'image(DATA_W)
            severity failure;
        assert CONN_W >= 1 and CONN_W <= 16
            report "ddp_rx: CONN_W must be 1..16, got " & integer'image(CONN_W)
            severity failure;
        assert STAG_AW >= 1 and STAG_AW <= 20
            report "ddp_rx: STAG_AW must be 1..20, got " & integer'image(STAG_AW)
            severity failure;
        assert RQ_AW >= 1 and RQ_AW <= 8
            report "ddp_rx: RQ_AW must be 1..8, got " & integer'image(RQ_AW)
            severity failure;
        assert ADDR_W >= 32 and ADDR_W <= 64
            report "ddp_rx: ADDR_W must be 32..64, got " & integer'image(ADDR_W)
            severity failure;
        assert ID_W >= 1 and ID_W <= 64
            report "ddp_rx: ID_W must be 1..64, got " & integer'image(ID_W)
            severity failure;
        assert BURST >= 2 and BURST <= 256 and is_pow2(BURST) and BURST * (DATA_W / 8) <= 4096
            report "ddp_rx: BURST must be a power of 2, 2..256, at most 4096 octets, got "
                & integer'image(BURST)
            severity failure;
        assert REC_AW >= 1 and REC_AW <= 8
            report "ddp_rx: REC_AW must be 1..8, got " & integer'image(REC_AW)
            severity failure;
        assert BQ_AW >= 1 and BQ_AW <= 7
            report "ddp_rx: BQ_AW must be 1..7, got " & integer'image(BQ_AW)
            severity failure;
        assert AXI_W = DATA_W or AXI_W = 2 * DATA_W
            report "ddp_rx: AXI_W must be DATA_W or 2 DATA_W, got " & integer'image(AXI_W)
            severity failure;
        assert WR_REQ = 0 or (WR_REQ = 1 and AXI_W = 2 * DATA_W)
            report "ddp_rx: WR_REQ must be 0, or 1 with AXI_W = 2 DATA_W, got " & integer'image(WR_REQ)
                & " (AXI_W " & integer'image(AXI_W) & ")"
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    subtype cx_t is cx_r(qs(3 * Q_W_c - 1 downto 0));
    subtype dx_t is dx_r(nxt(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
    subtype rf_t is rf_r(mark(MK_W_c - 1 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
    subtype hf_t is hf_r(conn(CONN_W - 1 downto 0));
    subtype df_t is df_r(data(DATA_W - 1 downto 0), keep(KEEP_W_c - 1 downto 0));
    subtype dc_t is dc_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                         su(SU_W_c - 1 downto 0));
    -- C1b to C2 and D0 to D1, bundled.
    subtype c1b_t is c1b_r(conn(CONN_W - 1 downto 0), cx(qs(3 * Q_W_c - 1 downto 0)), id(ID_W - 1 downto 0),
                           st(ST_W_c - 2 downto 0));
    subtype d0_t is d0_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                         r(LG_c - 1 downto 0), win0(KEEP_W_c - 1 downto 0), win1(KEEP_W_c - 1 downto 0),
                         lo(KEEP_W_c - 1 downto 0), hi(KEEP_W_c - 1 downto 0), waddr(ADDR_W - 1 downto 0),
                         bofs(BW_c - 1 downto 0));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);
    constant CX_ZERO_c : cx_t := cx_zero(RQ_AW);
    constant DX_ZERO_c : dx_t := dx_zero(ADDR_W, ID_W);
    constant RF_ZERO_c : rf_t := rf_zero(CONN_W, ID_W, BQ_AW);
    constant HF_ZERO_c : hf_t := hf_zero(CONN_W);
    constant DF_ZERO_c : df_t := df_zero(DATA_W);
    constant DC_ZERO_c : dc_t := dc_zero(DATA_W, CONN_W, ADDR_W, ID_W);

    -- --- wires between the stages --------------------------------------------------

    signal herr_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');
    signal herr_set : std_ulogic := '0';
    signal herr_set_conn : conn_t := (others => '0');
    signal cx_rd_data : cx_t := CX_ZERO_c;
    signal dx_rd_en : std_ulogic := '0';
    signal dx_rd_addr : conn_t := (others => '0');
    signal dx_rd_data : dx_t := DX_ZERO_c;
    signal st_rd_data : std_logic_vector(ST_W_c - 1 downto 0) := (others => '0');
    signal rg_rd_data : std_logic_vector(RG_W_c - 1 downto 0) := (others => '0');
    signal cf_post_reg : std_ulogic := '0';
    signal i_inpiece_reg : std_ulogic := '0';
    signal df_out : df_t := DF_ZERO_c;
    signal df_out_valid, df_out_ready : std_ulogic := '0';
    signal hf_out_valid, c_adv : std_ulogic := '0';
    signal h_valid : std_ulogic := '0';
    signal h_rec : hf_t := HF_ZERO_c;
    signal dc_in_ready : std_ulogic := '0';
    signal hf_conn : conn_t := (others => '0');
    signal hf_hdr : hdr_t := (others => '0');
    signal hf_idx32 : u32_t := (others => '0');
    signal c1_valid_reg : std_ulogic := '0';
    signal p1_conn : conn_t := (others => '0');
    signal b_valid_reg : std_ulogic := '0';
    signal c2_valid_reg : std_ulogic := '0';
    signal c2_conn_reg : conn_t := (others => '0');
    signal c2_first_reg, c2_early_reg : std_ulogic := '0';
    signal e_st_reg : std_ulogic_vector(ST_W_c - 2 downto 0) := (others => '0');
    signal k_idx : stagi_t := (others => '0');
    signal r_inval : std_ulogic := '0';
    signal c_en : std_ulogic := '0';
    signal r_cx : cx_t := CX_ZERO_c;
    signal c2_go, c2_decide, c2_err : std_ulogic := '0';
    signal c2_err_code : std_ulogic_vector(15 downto 0) := (others => '0');
    signal te_rd_en, te_own : std_ulogic := '0';
    signal te_rd_conn : conn_t := (others => '0');
    -- The Terminate's copied header (ddp_rx.v): {ulen, octets 0..17} at
    -- C1, C1b, C2; te_ram's entry {M, D, seglen, header}.
    signal te_c1_reg, te_b_reg, te_c2_reg : std_ulogic_vector(159 downto 0) := (others => '0');
    signal te_m, te_d : std_ulogic := '0';
    signal te_wr_data, te_rd_data : std_logic_vector(161 downto 0) := (others => '0');
    signal te_own_reg : std_ulogic := '0';
    signal dc_out : dc_t := DC_ZERO_c;
    signal dc_out_valid, dc_out_ready : std_ulogic := '0';
    signal aw_in_valid : std_ulogic := '0';
    signal aw_in_data : aww_t := (others => '0');
    signal aw_in_ready : std_ulogic := '0';
    signal w_in_valid : std_ulogic := '0';
    signal w_in_data : ww_t := (others => '0');
    signal w_in_ready : std_ulogic := '0';
    signal w_in_half, w2_in_half : std_ulogic := '0';
    signal w2_in_valid : std_ulogic := '0';
    signal w2_in_data : ww_t := (others => '0');
    signal w_in_ready2 : std_ulogic := '0';
    signal rf_in_valid : std_ulogic := '0';
    signal rf_in_data : rf_t := RF_ZERO_c;
    signal rf_in_ready : std_ulogic := '0';
    signal rf_out_data : rf_t := RF_ZERO_c;
    signal rf_out_valid, rf_out_ready : std_ulogic := '0';
    signal bq_in_ready : std_ulogic := '0';
    signal bq_out_data : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal bq_out_valid, b_go : std_ulogic := '0';
    signal aw_cnt_reg : mk_t := (others => '0');
    signal b_cnt_reg : mk_t := (others => '0');
    signal b_cnt1_reg : mk_t := to_unsigned(1, MK_W_c);
    signal d_conn_reg : conn_t := (others => '0');
    signal b_valid : std_ulogic := '0';
    signal b_resp : std_logic_vector(1 downto 0) := (others => '0');
    signal cut_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');
    signal cut_set : std_ulogic := '0';
    signal cut_set_conn : conn_t := (others => '0');
    signal d0_valid_reg, d1_active_reg, d2_valid_reg, d3_valid_reg : std_ulogic := '0';
    signal d4_valid_reg : std_ulogic := '0';
    signal d0_take, pl_empty : std_ulogic := '0';
    signal e2_last_reg, e2_en_reg, e2_early_reg : std_ulogic := '0';
    signal e2_conn_reg : conn_t := (others => '0');
    signal e2_rec_reg : rec_t := REC_ZERO_c;
    signal e2_rr_reg : rr_t := (others => '0');
    signal e4_place_reg : std_ulogic := '0';
    signal e4_conn_reg : conn_t := (others => '0');
    signal e4_rec_reg : rec_t := REC_ZERO_c;
    signal e4_rr_reg : rr_t := (others => '0');
    signal e4_nxt : addr_t := (others => '0');
    signal e4_left : u16_t := (others => '0');
    signal wq_busy : std_ulogic := '0';
    signal clr_busy_reg : std_ulogic := '0';
    signal cf_conn, cf_stag : std_ulogic := '0';
    signal o_conn_reg : conn_t := (others => '0');
    signal o_qn_reg : u2_t := (others => '0');
    signal o_ent_reg : rg_t := (others => '0');
    signal o_ok : std_ulogic := '0';
    signal rs_busy : std_ulogic := '0';

    signal c1b : c1b_t := c1b_zero(CONN_W, RQ_AW, ID_W, ST_W_c - 1);
    signal d0 : d0_t := d0_zero(DATA_W, CONN_W, ADDR_W, ID_W, BW_c);

begin

    -- The stages, each once (hw/rtl/ddp_rx.v has the map).

    u_tables : entity work.ddp_rx_tables
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            s_conn_valid => s_conn_valid,
            s_conn_conn => s_conn_conn,
            s_conn_enable => s_conn_enable,
            s_conn_pd => s_conn_pd,
            s_stag_valid => s_stag_valid,
            s_stag_index => s_stag_index,
            s_stag_entry_valid => s_stag_entry_valid,
            s_stag_key => s_stag_key,
            s_stag_pd => s_stag_pd,
            s_stag_bound => s_stag_bound,
            s_stag_conn => s_stag_conn,
            s_stag_access => s_stag_access,
            s_stag_base => s_stag_base,
            s_stag_len => s_stag_len,
            s_stag_addr => s_stag_addr,
            s_post_valid => s_post_valid,
            s_post_conn => s_post_conn,
            s_post_qn => s_post_qn,
            s_post_addr => s_post_addr,
            s_post_len => s_post_len,
            s_post_id => s_post_id,
            dx_rd_en => dx_rd_en,
            dx_rd_addr => dx_rd_addr,
            i_inpiece_reg => i_inpiece_reg,
            df_out_valid => df_out_valid,
            hf_out_valid => hf_out_valid,
            c_adv => c_adv,
            h_valid => h_valid,
            hf_conn => hf_conn,
            hf_hdr => hf_hdr,
            hf_idx32 => hf_idx32,
            c1_valid_reg => c1_valid_reg,
            b_valid_reg => b_valid_reg,
            c2_valid_reg => c2_valid_reg,
            c2_conn_reg => c2_conn_reg,
            e_st_reg => e_st_reg,
            k_idx => k_idx,
            r_inval => r_inval,
            r_cx => r_cx,
            c2_decide => c2_decide,
            dc_out_valid => dc_out_valid,
            aw_cnt_reg => aw_cnt_reg,
            d2_valid_reg => d2_valid_reg,
            d4_valid_reg => d4_valid_reg,
            pl_empty => pl_empty,
            e2_last_reg => e2_last_reg,
            e2_en_reg => e2_en_reg,
            e2_early_reg => e2_early_reg,
            e2_conn_reg => e2_conn_reg,
            e2_rec_reg => e2_rec_reg,
            e2_rr_reg => e2_rr_reg,
            e4_place_reg => e4_place_reg,
            e4_conn_reg => e4_conn_reg,
            e4_rec_reg => e4_rec_reg,
            e4_rr_reg => e4_rr_reg,
            e4_nxt => e4_nxt,
            e4_left => e4_left,
            s_conn_ready => s_conn_ready,
            s_stag_ready => s_stag_ready,
            s_post_ready => s_post_ready,
            cx_rd_data => cx_rd_data,
            dx_rd_data => dx_rd_data,
            st_rd_data => st_rd_data,
            rg_rd_data => rg_rd_data,
            cf_post_reg => cf_post_reg,
            rf_in_valid => rf_in_valid,
            rf_in_data => rf_in_data,
            cf_conn => cf_conn,
            cf_stag => cf_stag,
            clr_busy_reg => clr_busy_reg,
            o_conn_reg => o_conn_reg,
            o_qn_reg => o_qn_reg,
            o_ent_reg => o_ent_reg,
            o_ok => o_ok,
            wq_busy => wq_busy,
            bq_out_valid => bq_out_valid,
            rs_busy => rs_busy
        );

    u_intake : entity work.ddp_rx_intake
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => s_axis_tdata,
            s_axis_tkeep => s_axis_tkeep,
            s_axis_tvalid => s_axis_tvalid,
            s_axis_tlast => s_axis_tlast,
            s_axis_tuser => s_axis_tuser,
            s_conn_valid => s_conn_valid,
            s_stag_valid => s_stag_valid,
            s_post_valid => s_post_valid,
            cf_post_reg => cf_post_reg,
            clr_busy_reg => clr_busy_reg,
            df_out_ready => df_out_ready,
            c_adv => c_adv,
            s_axis_tready => s_axis_tready,
            i_inpiece_reg => i_inpiece_reg,
            df_out => df_out,
            df_out_valid => df_out_valid,
            hf_out_valid => hf_out_valid,
            h_valid => h_valid,
            h_rec => h_rec
        );

    u_check : entity work.ddp_rx_check
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            c1b => c1b,
            cx_rd_data => cx_rd_data,
            st_rd_data => st_rd_data,
            rg_rd_data => rg_rd_data,
            h_valid => h_valid,
            h_rec => h_rec,
            dc_in_ready => dc_in_ready,
            c_adv => c_adv,
            hf_conn => hf_conn,
            hf_hdr => hf_hdr,
            hf_idx32 => hf_idx32,
            c1_valid_reg => c1_valid_reg,
            p1_conn => p1_conn,
            b_valid_reg => b_valid_reg
        );

    u_decide : entity work.ddp_rx_decide
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            c1b => c1b,
            herr_reg => herr_reg,
            herr_set => herr_set,
            herr_set_conn => herr_set_conn,
            cut_reg => cut_reg,
            cut_set => cut_set,
            cut_set_conn => cut_set_conn,
            c_adv => c_adv,
            p1_conn => p1_conn,
            b_valid_reg => b_valid_reg,
            dc_out_ready => dc_out_ready,
            dc_in_ready => dc_in_ready,
            c2_valid_reg => c2_valid_reg,
            c2_conn_reg => c2_conn_reg,
            c2_first_reg => c2_first_reg,
            c2_early_reg => c2_early_reg,
            e_st_reg => e_st_reg,
            k_idx => k_idx,
            r_inval => r_inval,
            c_en => c_en,
            r_cx => r_cx,
            c2_go => c2_go,
            c2_decide => c2_decide,
            c2_err => c2_err,
            c2_err_code => c2_err_code,
            dc_out => dc_out,
            dc_out_valid => dc_out_valid
        );

    u_wport : entity work.ddp_rx_wport
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            m_axi_awready => m_axi_awready,
            m_axi_wready => m_axi_wready,
            m_axi_bresp => m_axi_bresp,
            m_axi_bvalid => m_axi_bvalid,
            m_wr_ready => m_wr_ready,
            aw_in_valid => aw_in_valid,
            aw_in_data => aw_in_data,
            w_in_valid => w_in_valid,
            w_in_data => w_in_data,
            w2_in_valid => w2_in_valid,
            w2_in_data => w2_in_data,
            w_in_half => w_in_half,
            w2_in_half => w2_in_half,
            rf_in_valid => rf_in_valid,
            rf_in_data => rf_in_data,
            rf_out_ready => rf_out_ready,
            b_go => b_go,
            d_conn_reg => d_conn_reg,
            m_axi_awid => m_axi_awid,
            m_axi_awaddr => m_axi_awaddr,
            m_axi_awlen => m_axi_awlen,
            m_axi_awsize => m_axi_awsize,
            m_axi_awburst => m_axi_awburst,
            m_axi_awcache => m_axi_awcache,
            m_axi_awprot => m_axi_awprot,
            m_axi_awvalid => m_axi_awvalid,
            m_axi_wdata => m_axi_wdata,
            m_axi_wstrb => m_axi_wstrb,
            m_axi_wlast => m_axi_wlast,
            m_axi_wvalid => m_axi_wvalid,
            m_wr_addr => m_wr_addr,
            m_wr_data => m_wr_data,
            m_wr_strb => m_wr_strb,
            m_wr_last => m_wr_last,
            m_wr_valid => m_wr_valid,
            aw_in_ready => aw_in_ready,
            w_in_ready => w_in_ready,
            w_in_ready2 => w_in_ready2,
            b_valid => b_valid,
            b_resp => b_resp,
            rf_in_ready => rf_in_ready,
            rf_out_data => rf_out_data,
            rf_out_valid => rf_out_valid,
            bq_in_ready => bq_in_ready,
            bq_out_data => bq_out_data,
            bq_out_valid => bq_out_valid,
            aw_cnt_reg => aw_cnt_reg,
            b_cnt_reg => b_cnt_reg,
            b_cnt1_reg => b_cnt1_reg,
            wq_busy => wq_busy
        );

    u_setup : entity work.ddp_rx_setup
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            d0 => d0,
            herr_reg => herr_reg,
            herr_set => herr_set,
            herr_set_conn => herr_set_conn,
            cf_conn => cf_conn,
            s_conn_conn => s_conn_conn,
            cf_stag => cf_stag,
            s_stag_index => s_stag_index,
            dx_rd_data => dx_rd_data,
            dc_out => dc_out,
            dc_out_valid => dc_out_valid,
            d1_active_reg => d1_active_reg,
            d2_valid_reg => d2_valid_reg,
            d3_valid_reg => d3_valid_reg,
            d4_valid_reg => d4_valid_reg,
            d0_take => d0_take,
            dx_rd_en => dx_rd_en,
            dx_rd_addr => dx_rd_addr,
            dc_out_ready => dc_out_ready,
            d0_valid_reg => d0_valid_reg,
            pl_empty => pl_empty,
            cut_reg => cut_reg,
            cut_set => cut_set,
            cut_set_conn => cut_set_conn
        );

    u_place : entity work.ddp_rx_place
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            d0 => d0,
            df_out => df_out,
            df_out_valid => df_out_valid,
            aw_in_ready => aw_in_ready,
            w_in_ready => w_in_ready,
            w_in_ready2 => w_in_ready2,
            rf_in_ready => rf_in_ready,
            bq_in_ready => bq_in_ready,
            d0_valid_reg => d0_valid_reg,
            df_out_ready => df_out_ready,
            aw_in_valid => aw_in_valid,
            aw_in_data => aw_in_data,
            w_in_valid => w_in_valid,
            w_in_data => w_in_data,
            w2_in_valid => w2_in_valid,
            w2_in_data => w2_in_data,
            w_in_half => w_in_half,
            w2_in_half => w2_in_half,
            d_conn_reg => d_conn_reg,
            d1_active_reg => d1_active_reg,
            d2_valid_reg => d2_valid_reg,
            d3_valid_reg => d3_valid_reg,
            d4_valid_reg => d4_valid_reg,
            d0_take => d0_take,
            e2_last_reg => e2_last_reg,
            e2_en_reg => e2_en_reg,
            e2_early_reg => e2_early_reg,
            e2_conn_reg => e2_conn_reg,
            e2_rec_reg => e2_rec_reg,
            e2_rr_reg => e2_rr_reg,
            e4_place_reg => e4_place_reg,
            e4_conn_reg => e4_conn_reg,
            e4_rec_reg => e4_rec_reg,
            e4_rr_reg => e4_rr_reg,
            e4_nxt => e4_nxt,
            e4_left => e4_left
        );

    u_deliver : entity work.ddp_rx_deliver
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            s_verdict_tdata => s_verdict_tdata,
            s_verdict_tvalid => s_verdict_tvalid,
            s_conn_conn => s_conn_conn,
            m_cpl_ready => m_cpl_ready,
            m_err_ready => m_err_ready,
            cx_rd_data => cx_rd_data,
            cf_post_reg => cf_post_reg,
            c2_conn_reg => c2_conn_reg,
            c2_first_reg => c2_first_reg,
            c2_early_reg => c2_early_reg,
            c_en => c_en,
            c2_go => c2_go,
            b_valid => b_valid,
            b_resp => b_resp,
            rf_in_ready => rf_in_ready,
            rf_out_data => rf_out_data,
            rf_out_valid => rf_out_valid,
            bq_out_data => bq_out_data,
            bq_out_valid => bq_out_valid,
            b_cnt_reg => b_cnt_reg,
            b_cnt1_reg => b_cnt1_reg,
            d2_valid_reg => d2_valid_reg,
            e2_last_reg => e2_last_reg,
            e2_early_reg => e2_early_reg,
            e2_conn_reg => e2_conn_reg,
            cf_conn => cf_conn,
            o_conn_reg => o_conn_reg,
            o_qn_reg => o_qn_reg,
            o_ent_reg => o_ent_reg,
            o_ok => o_ok,
            s_verdict_tready => s_verdict_tready,
            m_axi_bready => m_axi_bready,
            m_cpl_valid => m_cpl_valid,
            m_cpl_conn => m_cpl_conn,
            m_cpl_opcode => m_cpl_opcode,
            m_cpl_tagged => m_cpl_tagged,
            m_cpl_qn => m_cpl_qn,
            m_cpl_msn => m_cpl_msn,
            m_cpl_len => m_cpl_len,
            m_cpl_id => m_cpl_id,
            m_cpl_stag => m_cpl_stag,
            m_cpl_inv_stag => m_cpl_inv_stag,
            m_cpl_rr => m_cpl_rr,
            m_err_valid => m_err_valid,
            m_err_conn => m_err_conn,
            m_err_layer => m_err_layer,
            m_err_etype => m_err_etype,
            m_err_code => m_err_code,
            m_drop_valid => m_drop_valid,
            m_drop_conn => m_drop_conn,
            m_drop_reason => m_drop_reason,
            m_drop_first => m_drop_first,
            m_drop_count => m_drop_count,
            m_post_err_valid => m_post_err_valid,
            m_post_err_conn => m_post_err_conn,
            m_post_err_qn => m_post_err_qn,
            m_post_err_id => m_post_err_id,
            m_post_err_reason => m_post_err_reason,
            m_berr_valid => m_berr_valid,
            m_berr_conn => m_berr_conn,
            m_berr_resp => m_berr_resp,
            m_done_valid => m_done_valid,
            m_done_conn => m_done_conn,
            herr_reg => herr_reg,
            herr_set => herr_set,
            herr_set_conn => herr_set_conn,
            rf_out_ready => rf_out_ready,
            b_go => b_go,
            rs_busy => rs_busy,
            te_rd_en => te_rd_en,
            te_rd_conn => te_rd_conn,
            te_own => te_own
        );

    -- What the Terminate copies (ddp_rx.v has the why): the header record's
    -- ULPDU length and header octets follow the piece to C2; an error
    -- decided there writes them, with M and D, into the connection's
    -- te_ram entry; V0 reads it at each delivery.
    p_te_pipe : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                te_c1_reg <= h_rec.ulen & h_rec.hdr;
                te_b_reg <= te_c1_reg;
                te_c2_reg <= te_b_reg;
            end if;
            if te_rd_en = '1' then
                te_own_reg <= te_own;
            end if;
        end if;
    end process p_te_pipe;

    p_te_flags : process (all) is
        variable ulen : unsigned(15 downto 0);
        variable tag, short, fmt, m, d : std_ulogic;
        variable hdr : std_ulogic_vector(143 downto 0);
        variable seglen : std_ulogic_vector(15 downto 0);
    begin
        ulen := unsigned(te_c2_reg(159 downto 144));
        tag := te_c2_reg(7);
        if tag = '1' then
            short := to_sl(ulen < 14);
        else
            short := to_sl(ulen < 18);
        end if;
        fmt := to_sl(c2_err_code = ERR_RDMAP_STREAM_CATASTROPHIC) and not short;
        m := not fmt and to_sl(ulen /= 0);
        d := not fmt and not short;
        hdr := te_c2_reg(143 downto 0);
        if tag = '1' then
            hdr(143 downto 112) := (others => '0');
        end if;
        if d = '0' then
            hdr := (others => '0');
        end if;
        if m = '1' then
            seglen := std_ulogic_vector(ulen);
        else
            seglen := (others => '0');
        end if;
        te_m <= m;
        te_d <= d;
        te_wr_data <= std_logic_vector(m & d & seglen & hdr);
    end process p_te_flags;

    u_te_ram : entity work.sdp_ram
        generic map (WIDTH => 162, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => c2_err, wr_addr => c2_conn_reg, wr_data => te_wr_data,
            rd_en => te_rd_en, rd_addr => te_rd_conn, rd_data => te_rd_data
        );

    m_err_hdrct <= te_rd_data(161 downto 160) when te_own_reg = '1' else "00";
    m_err_seglen <= te_rd_data(159 downto 144) when te_own_reg = '1' else (others => '0');
    m_err_hdr <= te_rd_data(143 downto 0) when te_own_reg = '1' else (others => '0');

end architecture rtl;
