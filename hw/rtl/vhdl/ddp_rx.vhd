-- ddp_rx: DDP/RDMAP receive placement, DATA_W bits per clock.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx.v: same generics, same ports, same
-- registers and clock counts, so tests/ddp_rx/test_ddp_rx.py drives both
-- (the Verilog header has the interface, the order of the checks, the
-- structure and the figures in full). In brief:
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

    constant KEEP_W_c : positive := DATA_W / 8;                   -- lanes, N
    constant LG_c     : positive := clog2(KEEP_W_c);
    constant HB_c     : positive := (18 + KEEP_W_c - 1) / KEEP_W_c;   -- beats that hold an untagged header
    constant HBT_c    : positive := (14 + KEEP_W_c - 1) / KEEP_W_c;   -- beats that hold a tagged one
    -- At W=64 a first piece's beat 0 holds header octets only: it is not
    -- queued for placement unless it is the piece's last (see ddp_rx.v).
    constant DROP0_c  : natural := boolean'pos(KEEP_W_c < 14);
    constant HL14D_c  : natural := 14 - DROP0_c * KEEP_W_c;       -- header lengths less a dropped beat
    constant HL18D_c  : natural := 18 - DROP0_c * KEEP_W_c;
    constant BW_c     : positive := clog2(BURST);
    constant NCONN_c  : positive := 2 ** CONN_W;
    constant RG_AW_c  : positive := CONN_W + 2 + RQ_AW;           -- conn & qn & slot

    -- Per-queue state: first MSN & count.
    constant Q_W_c    : positive := 32 + RQ_AW + 1;
    -- Delivery record of a ULPDU: kind & opcode & tagged & qn & msn & len &
    -- id & stag & inv_stag & layer & etype & code.
    constant RECC_W_c : positive := 2 + 4 + 1 + 2 + 32 + 32 + ID_W + 32 + 32 + 4 + 4 + 8;
    -- Check context of a connection: enable & pd & fail & q2 & q1 & q0.
    constant CX_W_c   : positive := 1 + 32 + 1 + 3 * Q_W_c;
    -- Placement context: place & nxt & remain & rec & rr.
    constant DX_W_c   : positive := 1 + ADDR_W + 16 + RECC_W_c + 224;
    -- STag entry: valid & key & pd & bound & conn & access & base & len & addr.
    constant ST_W_c   : positive := 1 + 8 + 32 + 1 + CONN_W + 2 + 64 + 32 + ADDR_W;
    -- Posted buffer: addr & len & id.
    constant RG_W_c   : positive := ADDR_W + 32 + ID_W;
    constant MK_W_c   : positive := BQ_AW + 3;                     -- burst counts, modulo 2**MK_W (see b_hold)
    constant RF_W_c   : positive := 1 + MK_W_c + CONN_W + RECC_W_c + 224;   -- enabled & mark & conn & rec & rr
    -- Header record of a piece: drop & early & short & n & ulen & conn &
    -- first & octets 0..17 (drop: its beat 0 was not queued, W=64).
    constant HF_W_c   : positive := 1 + 1 + 1 + 16 + 16 + CONN_W + 1 + 144;
    -- Input beat: data & keep & tlast & ULPDU last.
    constant DF_W_c   : positive := DATA_W + KEEP_W_c + 2;
    -- Placement set-up of a piece (pl_setup): r & m0 & ylo & left & q1.
    constant SU_W_c   : positive := LG_c + 3 + LG_c + 18 + 20;
    -- Placement descriptor: early & conn & first & enabled & place & dest &
    -- s & remain & rec & set-up.
    constant DC_W_c   : positive := 1 + CONN_W + 3 + ADDR_W + 5 + 16 + RECC_W_c + SU_W_c;
    -- STag write generation (the cut of a ULPDU between its pieces).
    constant GEN_W_c  : positive := 16;
    constant REC_TAGGED_c : natural := RECC_W_c - 7;             -- a record's tagged bit
    constant REC_STAG_c : natural := 48;                         -- a tagged record's STag, 32 bits
    constant W_W_c    : positive := DATA_W + KEEP_W_c + 1;          -- W queue word: data & strb & last
    constant AWQ_W_c  : positive := ADDR_W + 8;                     -- AW queue word: addr & len

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(KEEP_W_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype addr_t is unsigned(ADDR_W - 1 downto 0);
    subtype rec_t is std_ulogic_vector(RECC_W_c - 1 downto 0);
    subtype rr_t is std_ulogic_vector(223 downto 0);
    subtype hdr_t is std_ulogic_vector(143 downto 0);
    subtype cx_t is std_ulogic_vector(CX_W_c - 1 downto 0);
    subtype q_t is std_ulogic_vector(Q_W_c - 1 downto 0);
    subtype qs_t is std_ulogic_vector(3 * Q_W_c - 1 downto 0);
    subtype qcnt_t is unsigned(RQ_AW downto 0);
    subtype st_t is std_ulogic_vector(ST_W_c - 1 downto 0);
    subtype rg_t is std_ulogic_vector(RG_W_c - 1 downto 0);
    subtype dx_t is std_ulogic_vector(DX_W_c - 1 downto 0);
    subtype rf_t is std_ulogic_vector(RF_W_c - 1 downto 0);
    subtype hf_t is std_ulogic_vector(HF_W_c - 1 downto 0);
    subtype df_t is std_ulogic_vector(DF_W_c - 1 downto 0);
    subtype dc_t is std_ulogic_vector(DC_W_c - 1 downto 0);
    subtype gen_t is std_ulogic_vector(GEN_W_c - 1 downto 0);
    subtype su_t is std_ulogic_vector(SU_W_c - 1 downto 0);
    subtype ww_t is std_ulogic_vector(W_W_c - 1 downto 0);
    subtype aww_t is std_ulogic_vector(AWQ_W_c - 1 downto 0);
    subtype mk_t is unsigned(MK_W_c - 1 downto 0);
    subtype lane_t is unsigned(LG_c - 1 downto 0);
    subtype bofs_t is unsigned(BW_c - 1 downto 0);
    subtype stagi_t is std_ulogic_vector(STAG_AW - 1 downto 0);
    subtype id_t is std_ulogic_vector(ID_W - 1 downto 0);
    subtype u2_t is unsigned(1 downto 0);
    subtype u4_t is unsigned(3 downto 0);
    subtype u5_t is unsigned(4 downto 0);
    subtype u8_t is unsigned(7 downto 0);
    subtype u13_t is unsigned(12 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype u17_t is unsigned(16 downto 0);
    subtype u18_t is unsigned(17 downto 0);
    subtype u20_t is unsigned(19 downto 0);
    subtype u32_t is unsigned(31 downto 0);
    subtype u64_t is unsigned(63 downto 0);
    subtype w16_t is std_ulogic_vector(15 downto 0);
    subtype w32_t is std_ulogic_vector(31 downto 0);

    constant K_NONE_c : u2_t := "00";
    constant K_CPL_c  : u2_t := "01";
    constant K_ERR_c  : u2_t := "10";
    constant K_TERM_c : u2_t := "11";
    constant D_DATA_c  : u2_t := "00";
    constant D_FLUSH_c : u2_t := "01";
    constant D_PAD_c   : u2_t := "10";

    constant N18_c : u18_t := to_unsigned(KEEP_W_c, 18);
    constant Q_INIT_c : q_t := std_ulogic_vector(to_unsigned(1, 32)) & (RQ_AW downto 0 => '0');
    constant BEND1_c : bofs_t := to_unsigned(2 ** BW_c - 2, BW_c);  -- the block's last beat but one
    constant QFULL_c : qcnt_t := to_unsigned(2 ** RQ_AW, RQ_AW + 1);  -- 2**RQ_AW

    -- --- helpers ----------------------------------------------------------------

    -- pl_setup(dlo, s, remain): what placement needs of a piece whose first
    -- payload octet goes to a host address with low bits dlo, at octet s of
    -- the piece, with remain payload octets to the end of the ULPDU. Octet g
    -- of the piece is output octet g + r, r = (dlo - s) mod N; the payload's
    -- output octets run from gs = s + r (gs = dlo mod N) to end = gs +
    -- remain - 1. Fields: r; m0 = gs / N, the output beat of the first
    -- payload octet; ylo = end mod N, the last payload octet's lane; left =
    -- (dlo + remain + N - 1) / N, the output beats the payload takes; q1 =
    -- m1 - 2, m1 = end / N the output beat of the last payload octet (-1 for
    -- no payload), as a 20-bit two's complement count. gs is at most 31 + N
    -- - 1, so m0 at most 4. The two sums are fadd trees; q1 = (remain + gs -
    -- 1 - 2N) >> LG, arithmetic, in one sum.
    function pl_setup(dlo : lane_t; s : u5_t; remain : u16_t) return su_t is
        variable s8 : u8_t;
        variable gs : unsigned(9 downto 0);
        variable r, ylo : lane_t;
        variable yq, q1 : u20_t;
        variable sl, sq : u33_t;              -- (only some bits of the sums are wanted)
    begin
        s8 := resize(s, 8);
        r := dlo - s8(LG_c - 1 downto 0);
        gs := resize(s8, 10) + resize(r, 10);
        ylo := dlo + remain(LG_c - 1 downto 0) - 1;
        sl := fadd(resize(remain, 32), resize(dlo, 32) + KEEP_W_c - 1, '0');
        yq := resize(gs, 20) - 1 - resize(N18_c(16 downto 0) & '0', 20);
        sq := fadd(resize(remain, 32), resize(yq, 32), '0');
        q1 := unsigned(shift_right(signed(sq(19 downto 0)), LG_c));
        if remain = 0 then
            q1 := x"ffffd";                   -- m1 = -1
        end if;
        return std_ulogic_vector(r & gs(LG_c + 2 downto LG_c) & ylo & sl(LG_c + 17 downto LG_c) & q1);
    end function pl_setup;

    -- Big-endian field of 4 octets starting at octet o of the header (RFC
    -- 5041 4: octet 0 in lane 0).
    function be32(h : hdr_t; o : natural) return u32_t is
    begin
        return unsigned(h(8 * o + 7 downto 8 * o)) & unsigned(h(8 * o + 15 downto 8 * o + 8))
            & unsigned(h(8 * o + 23 downto 8 * o + 16)) & unsigned(h(8 * o + 31 downto 8 * o + 24));
    end function be32;

    -- Octets in a tkeep that is a run from lane 0: the run's last lane b
    -- (lane b kept, lane b + 1 not) gives b + 1, each bit of the count an OR
    -- over the lanes whose b + 1 has it set (no priority search: see the
    -- Verilog).
    function keep_count(k : keep_t) return unsigned is
        variable e : std_ulogic_vector(KEEP_W_c downto 0);
        variable c : unsigned(LG_c downto 0);
    begin
        e := ('0' & k) and not ("00" & k(KEEP_W_c - 1 downto 1));   -- e(b): lane b is the run's last
        c := (others => '0');
        for b in 0 to KEEP_W_c - 1 loop
            c := c or (to_unsigned(b + 1, LG_c + 1) and (LG_c downto 0 => e(b)));
        end loop;
        return c;
    end function keep_count;

    function expand(m : keep_t) return data_t is
        variable d : data_t;
    begin
        for b in 0 to KEEP_W_c - 1 loop
            d(8 * b + 7 downto 8 * b) := (others => m(b));
        end loop;
        return d;
    end function expand;

    -- Queue qn of a check context's queues.
    function cx_q(cx : qs_t; qn : std_ulogic_vector(1 downto 0)) return q_t is
    begin
        case qn is
            when "01" => return cx(2 * Q_W_c - 1 downto Q_W_c);
            when "10" => return cx(3 * Q_W_c - 1 downto 2 * Q_W_c);
            when others => return cx(Q_W_c - 1 downto 0);
        end case;
    end function cx_q;

    -- Queue state after popping the head (a delivered untagged message): a
    -- pop is of the oldest MSN (the checks allow no other), so the new head
    -- is the message's MSN + 1 (msn1, worked out at C1), and C2 needs no sum.
    function q_pop(cnt : qcnt_t; msn1 : u32_t) return q_t is
    begin
        return std_ulogic_vector(msn1) & std_ulogic_vector(cnt - 1);
    end function q_pop;

    -- Lanes of output beat m that are in the window [m0*N + lo, m1*N + hi],
    -- from flags of q0 = m0 - m and q1 = m1 - m: q0 = 0, q0 > 0, q1 = 0,
    -- q1 < 0; lo_m = lanes >= lo, hi_m = lanes <= hi.
    function win_flags(q0z : std_ulogic; q0p : std_ulogic; q1z : std_ulogic; q1n : std_ulogic;
                       lo_m : keep_t; hi_m : keep_t) return keep_t is
        variable r : keep_t;
    begin
        if q0p = '1' or q1n = '1' then
            return (KEEP_W_c - 1 downto 0 => '0');
        end if;
        r := (others => '1');
        if q0z = '1' then
            r := lo_m;
        end if;
        if q1z = '1' then
            r := r and hi_m;
        end if;
        return r;
    end function win_flags;

    -- The same from q0 and q1 themselves (20-bit two's complement).
    function win_mask(q0 : u20_t; q1 : u20_t; lo_m : keep_t; hi_m : keep_t) return keep_t is
    begin
        return win_flags(to_sl(q0 = 0), to_sl(q0(19) = '0' and q0 /= 0), to_sl(q1 = 0), q1(19), lo_m, hi_m);
    end function win_mask;

    -- Octets 18..45 of a first piece from its input beat k.
    function rr_capture(rr : rr_t; beat : data_t; k : u13_t) return rr_t is
        variable r : rr_t;
    begin
        r := rr;
        for j in 0 to 27 loop
            -- (k counts the beats queued: at W=64 beat 0, all header, was not.)
            if to_integer(k) = (18 + j) / KEEP_W_c - DROP0_c then
                r(8 * j + 7 downto 8 * j) := beat(8 * ((18 + j) mod KEEP_W_c) + 7 downto 8 * ((18 + j) mod KEEP_W_c));
            end if;
        end loop;
        return r;
    end function rr_capture;

    function sel(c : std_ulogic; a : std_ulogic; b : std_ulogic) return std_ulogic is
    begin
        if c = '1' then
            return a;
        end if;
        return b;
    end function sel;

    function ci(c : conn_t) return natural is
    begin
        return to_integer(unsigned(c));
    end function ci;

    -- --- state shared with configuration ---------------------------------------

    -- Connections that took an error B response since their last (re)start,
    -- and connections whose stream has ended (error, Terminate).
    signal herr_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');
    signal herr_set : std_ulogic := '0';               -- herr_reg(herr_set_conn) is set at this edge
    signal herr_set_conn : conn_t := (others => '0');
    signal dead_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');

    -- --- tables ------------------------------------------------------------------

    signal cx_wr_en   : std_ulogic := '0';
    signal cx_wr_addr : conn_t := (others => '0');
    signal cx_wr_data : cx_t := (others => '0');
    signal cx_rd_en   : std_ulogic := '0';
    signal cx_rd_addr : conn_t := (others => '0');
    signal cx_rd_data : std_logic_vector(CX_W_c - 1 downto 0) := (others => '0');

    signal dx_wr_en   : std_ulogic := '0';
    signal dx_wr_addr : conn_t := (others => '0');
    signal dx_wr_data : dx_t := (others => '0');
    signal dx_rd_en   : std_ulogic := '0';
    signal dx_rd_addr : conn_t := (others => '0');
    signal dx_rd_data : std_logic_vector(DX_W_c - 1 downto 0) := (others => '0');

    signal st_wr_en   : std_ulogic := '0';
    signal st_wr_addr : stagi_t := (others => '0');
    signal st_wr_data : st_t := (others => '0');
    signal st_rd_en   : std_ulogic := '0';
    signal st_rd_addr : stagi_t := (others => '0');
    signal st_rd_data : std_logic_vector(ST_W_c - 1 downto 0) := (others => '0');

    signal rg_wr_en   : std_ulogic := '0';
    signal rg_wr_addr : std_ulogic_vector(RG_AW_c - 1 downto 0) := (others => '0');
    signal rg_wr_data : rg_t := (others => '0');
    signal rg_rd_en   : std_ulogic := '0';
    signal rg_rd_addr : std_ulogic_vector(RG_AW_c - 1 downto 0) := (others => '0');
    signal rg_rd_data : std_logic_vector(RG_W_c - 1 downto 0) := (others => '0');

    -- --- intake ----------------------------------------------------------------------

    signal cf_post_reg   : std_ulogic := '0';      -- a post between its context read and write
    signal cfg_pending   : std_ulogic := '0';

    signal i_inpiece_reg : std_ulogic := '0';      -- inside a piece (its first beat taken)
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

    signal df_in_data : df_t := (others => '0');
    signal df_out : std_logic_vector(DF_W_c - 1 downto 0) := (others => '0');
    signal df_out_valid, df_out_ready : std_ulogic := '0';

    signal hf_in_data : hf_t := (others => '0');
    signal hf_out : std_logic_vector(HF_W_c - 1 downto 0) := (others => '0');
    signal hf_out_valid, c_adv : std_ulogic := '0';
    signal h_thru, h_valid : std_ulogic := '0';
    signal h_rec : std_logic_vector(HF_W_c - 1 downto 0) := (others => '0');

    -- --- check pipeline ------------------------------------------------------------------

    signal dc_in_ready : std_ulogic := '0';
    signal hf_conn : conn_t := (others => '0');
    signal hf_hdr : hdr_t := (others => '0');
    signal hf_idx32 : u32_t := (others => '0');

    signal c1_valid_reg : std_ulogic := '0';
    signal c1_rec_reg : hf_t := (others => '0');

    signal p1_drop, p1_early, p1_short, p1_first : std_ulogic := '0';
    signal p1_n : u16_t := (others => '0');
    signal p1_conn : conn_t := (others => '0');

    -- C1 results.
    signal h_t, h_l : std_ulogic := '0';
    signal h_op : u4_t := (others => '0');
    signal h_stag, h_qn, h_msn : u32_t := (others => '0');
    signal h_hlen : u5_t := (others => '0');
    signal h_cerr : std_ulogic := '0';
    signal h_cerr_code : w16_t := (others => '0');
    signal h_cnt : qcnt_t := (others => '0');
    signal h_n : u16_t := (others => '0');
    signal st_acc0 : std_ulogic := '0';
    signal rg_id : id_t := (others => '0');

    -- Checks on the STag entry and the posted buffer just read, over two
    -- clocks, C1 and C1b, each at most 5 LUT levels: every sum of 16 bits
    -- or more is split in 8-bit chunks (sum72a at C1, sum72b at C1b,
    -- through the b_*_a registers), and every comparison of a sum is the
    -- sign of one (bit 71 of a 72-bit sum, operands one's complemented to
    -- 72 bits) or an equality found without a carry chain (sumeq). What the
    -- decision needs:
    --   bounds:  TO < base, or TO + n > base + len (as integers: the same
    --            as TO - base outside 0 .. 2**32-1 or off + n > len, 7.1);
    --   address: addr + TO - base (tagged), addr + MO (untagged);
    --   MO + n:  the message length, its check against the buffer and 28;
    --   d_j:     MSN - first - j for j = 0..3 (the window checks): whether
    --            its bits above RQ_AW are zero, its low bits, its sign,
    --            whether it is zero.
    constant LQ_c : positive := RQ_AW + 1;          -- low bits of d_j that the window check compares
    constant MASK32_c : u72_t := resize(unsigned'(x"ffffffff"), 72);
    constant MASK_HI_c : u72_t := shift_right(MASK32_c, LQ_c);   -- d_j's bits LQ..31, shifted down
    subtype sg4_t is unsigned(4 * 162 - 1 downto 0);
    subtype low4_t is unsigned(4 * LQ_c - 1 downto 0);
    subtype cm4_t is unsigned(4 * (LQ_c + 1) - 1 downto 0);

    signal a_lt, a_gt, a_dt, a_du, a_mon, a_long : u162_t := (others => '0');
    signal a_wrap, a_mo_gt, a_rr_eq, c1_stag_bad, c1_assoc_bad : std_ulogic := '0';
    signal a_msn1 : u33_t := (others => '0');
    signal a_sg : sg4_t := (others => '0');           -- d_j's sign, first clock
    signal a_uz, a_z : std_ulogic_vector(3 downto 0) := (others => '0');   -- d_j's bits LQ..31 zero, d_j zero
    signal a_low : low4_t := (others => '0');         -- d_j's bits 0..LQ-1
    signal a_cm : cm4_t := (others => '0');           -- count - j: the window's size

    -- C1b registers.
    signal b_valid_reg : std_ulogic := '0';
    signal b_conn_reg : conn_t := (others => '0');
    signal b_first_reg, b_early_reg : std_ulogic := '0';
    signal b_cx_reg : cx_t := (others => '0');
    signal b_t_reg, b_l_reg : std_ulogic := '0';
    signal b_op_reg : u4_t := (others => '0');
    signal b_stag_reg, b_msn_reg, b_msn1_reg : u32_t := (others => '0');
    signal b_qn_reg : u2_t := (others => '0');
    signal b_n_reg : u16_t := (others => '0');
    signal b_hlen_reg : u5_t := (others => '0');
    signal b_cerr_reg : std_ulogic := '0';
    signal b_cerr_code_reg : w16_t := (others => '0');
    signal b_stag_bad_reg, b_assoc_bad_reg, b_acc_reg, b_wrap_reg : std_ulogic := '0';
    signal b_mo_gt_reg, b_rr_eq_reg : std_ulogic := '0';
    signal b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a : u162_t := (others => '0');
    signal b_sg_a : sg4_t := (others => '0');
    signal b_uz_reg, b_z_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal b_low_reg : low4_t := (others => '0');
    signal b_cm_reg : cm4_t := (others => '0');
    signal b_id_reg : id_t := (others => '0');
    signal b_st_reg : std_ulogic_vector(ST_W_c - 2 downto 0) := (others => '0');

    -- C1b: the sums' second clock, and the window checks.
    signal bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long : u73_t := (others => '0');
    signal bs_nobuf, bs_behind : std_ulogic_vector(3 downto 0) := (others => '0');

    -- C2 registers.
    signal c2_valid_reg : std_ulogic := '0';
    signal c2_conn_reg : conn_t := (others => '0');
    signal c2_first_reg, c2_early_reg : std_ulogic := '0';
    signal c2_cx_reg : cx_t := (others => '0');
    signal k_tagged_reg, k_l_reg : std_ulogic := '0';
    signal k_op_reg : u4_t := (others => '0');
    signal k_stag_reg, k_msn_reg, k_msn1_reg : u32_t := (others => '0');
    signal k_qn_reg : u2_t := (others => '0');
    signal k_n_reg : u16_t := (others => '0');
    signal k_hlen_reg : u5_t := (others => '0');
    signal k_cerr_reg : std_ulogic := '0';
    signal k_cerr_code_reg : w16_t := (others => '0');
    signal e_t_inv_reg, e_t_assoc_reg, e_t_acc_reg, e_t_wrap_reg, e_t_bounds_reg : std_ulogic := '0';
    signal e_u_nobuf_reg, e_u_behind_reg, e_u_lorder_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal e_u_mo_reg, e_u_long_reg : std_ulogic := '0';
    signal e_i_bad_reg, e_rr_bad_reg : std_ulogic := '0';
    signal e_dt_reg, e_du_reg : addr_t := (others => '0');
    signal e_len_reg : u32_t := (others => '0');
    signal e_id_reg : id_t := (others => '0');
    signal e_st_reg : std_ulogic_vector(ST_W_c - 2 downto 0) := (others => '0');

    -- The last three decisions (0 the newest): valid, conn, context
    -- written, popped, popped QN, invalidated, invalidated index; the oldest
    -- needs only what fs/fq/fk (below) do not say.
    signal hs0_valid_reg, hs1_valid_reg : std_ulogic := '0';
    signal hs0_conn_reg, hs1_conn_reg : conn_t := (others => '0');
    signal hs0_cx_reg, hs1_cx_reg, hs2_cx_reg : cx_t := (others => '0');
    signal hs0_pop_reg, hs1_pop_reg, hs2_pop_reg : std_ulogic := '0';
    signal hs0_qn_reg, hs1_qn_reg : u2_t := (others => '0');
    signal hs0_inv_reg, hs1_inv_reg, hs2_inv_reg : std_ulogic := '0';
    signal hs0_idx_reg, hs1_idx_reg : stagi_t := (others => '0');

    -- Which of the last three decisions C2's piece must take in, worked out
    -- as the pieces move up (so C2 has no comparison of its own to make):
    -- fs, the decision is of the same connection; fq, and of the same
    -- queue; fk, it invalidated (if it did) the STag index the piece uses.
    -- Bit k is for hs<k> as it will be after the next move.
    signal fs_reg, fq_reg, fk_reg : std_ulogic_vector(2 downto 0) := (others => '0');
    signal b_idx : stagi_t := (others => '0');

    -- herr_reg's bit for C2's piece, looked up over two clocks as the piece
    -- moves up (a group of 2**HG bits at C1b, then the bit), with what is
    -- set meanwhile. (No bit is cleared while a piece is in the pipeline:
    -- configuration waits for it to empty.)
    constant HG_c : natural := imin(CONN_W, 4);
    constant NHG_c : positive := 2 ** HG_c;
    constant HG_MASK_c : conn_t := std_ulogic_vector(to_unsigned(NHG_c - 1, CONN_W));
    subtype hgrp_t is std_ulogic_vector(NHG_c - 1 downto 0);
    signal b_hgrp_reg : hgrp_t := (others => '0');
    signal c2_herr_reg : std_ulogic := '0';

    function herr_group(h : std_ulogic_vector(NCONN_c - 1 downto 0); c : conn_t) return hgrp_t is
        variable base : natural;
    begin
        base := ci(c and not HG_MASK_c);
        return h(base + NHG_c - 1 downto base);
    end function herr_group;

    function herr_bit(g : hgrp_t; c : conn_t) return std_ulogic is
    begin
        return g(ci(c and HG_MASK_c));
    end function herr_bit;

    -- The bits of c's group set at this edge (set, at set_conn).
    function herr_group_set(c : conn_t; set : std_ulogic; set_conn : conn_t) return hgrp_t is
        variable r : hgrp_t;
    begin
        r := (others => '0');
        if set = '1' and shift_right(unsigned(set_conn), HG_c) = shift_right(unsigned(c), HG_c) then
            r(ci(set_conn and HG_MASK_c)) := '1';
        end if;
        return r;
    end function herr_group_set;

    -- C2 decision.
    signal k_idx : stagi_t := (others => '0');
    signal r_kind : u2_t := (others => '0');
    signal r_place, r_pop, r_inval : std_ulogic := '0';
    signal r_dest : addr_t := (others => '0');
    signal r_rec : rec_t := (others => '0');
    signal c_en : std_ulogic := '0';
    signal r_cx : cx_t := (others => '0');
    signal c2_go, c2_decide : std_ulogic := '0';

    signal c2_su_t, c2_su_u, c2_su : su_t := (others => '0');
    signal dc_in_data : dc_t := (others => '0');
    signal dc_out : std_logic_vector(DC_W_c - 1 downto 0) := (others => '0');
    signal dc_out_valid, dc_out_ready : std_ulogic := '0';

    -- --- output queues ---------------------------------------------------------------

    signal aw_in_valid : std_ulogic := '0';
    signal aw_in_data : aww_t := (others => '0');
    signal aw_in_ready : std_ulogic := '0';
    signal aw_out_data : std_logic_vector(AWQ_W_c - 1 downto 0) := (others => '0');
    signal aw_out_valid : std_ulogic := '0';

    signal w_in_valid : std_ulogic := '0';
    signal w_in_data : ww_t := (others => '0');
    signal w_in_ready : std_ulogic := '0';
    signal w_out_data : std_logic_vector(W_W_c - 1 downto 0) := (others => '0');
    signal w_out_valid : std_ulogic := '0';
    -- W beats go once their burst's AW is valid, not only once it is taken
    -- (AXI4 A3.3.1: a master must not wait for AWREADY before asserting
    -- WVALID). w_credit counts the AWs taken less the bursts whose last W
    -- beat has gone, -1 (a burst's W beats all gone before its AW was
    -- taken) to 15: above 0, the W head is an AW's that was taken; at 0, it
    -- belongs to the AW at the head of its queue (AWs are queued with their
    -- burst's first W beat).
    signal w_credit_reg : signed(4 downto 0) := (others => '0');
    signal w_ok : std_ulogic := '0';
    signal w_go, w_out_ready : std_ulogic := '0';
    signal w_out_last : std_ulogic := '0';         -- a bus beat with WLAST taken
    -- Bit LG of a queued W beat's address (the wide port's half for a
    -- burst's first beat; see the Verilog).
    signal w_in_half, w2_in_half : std_ulogic := '0';
    signal w2_in_valid : std_ulogic := '0';
    signal w2_in_data : ww_t := (others => '0');
    signal w_in_ready2 : std_ulogic := '0';

    signal rf_in_valid : std_ulogic := '0';
    signal rf_in_data : rf_t := (others => '0');
    signal rf_in_ready : std_ulogic := '0';
    signal rf_out_data : std_logic_vector(RF_W_c - 1 downto 0) := (others => '0');
    signal rf_out_valid, rf_out_ready : std_ulogic := '0';

    signal bq_in_ready : std_ulogic := '0';
    signal bq_out_data : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal bq_out_valid, b_go : std_ulogic := '0';
    signal aw_cnt_reg : mk_t := (others => '0');
    signal b_cnt_reg : mk_t := (others => '0');
    signal b_cnt1_reg : mk_t := to_unsigned(1, MK_W_c);   -- b_cnt_reg + 1
    signal d_conn_reg : conn_t := (others => '0');

    signal axi_awvalid, axi_wlast, axi_bready : std_ulogic := '0';
    -- the AW queue's head taken; the B responses the delivery waits for
    -- (the port's, or with WR_REQ = 1 an OKAY per burst once its last
    -- request has gone: see the Verilog)
    signal aw_pop, b_valid : std_ulogic := '0';
    signal b_resp : std_logic_vector(1 downto 0) := (others => '0');

    -- --- placement -------------------------------------------------------------------

    signal g_early, g_first, g_en, g_dplace : std_ulogic := '0';
    signal g_conn : conn_t := (others => '0');
    signal g_ddest : addr_t := (others => '0');
    signal g_ds : u5_t := (others => '0');
    signal g_dremain : u16_t := (others => '0');
    signal g_drec : rec_t := (others => '0');
    signal g_dsu : su_t := (others => '0');

    signal g_fetch_reg, g_fetch2_reg : std_ulogic := '0';
    signal g_fconn_reg : conn_t := (others => '0');
    signal g_fen_reg : std_ulogic := '0';
    signal gx_place_reg : std_ulogic := '0';
    signal gx_dest_reg : addr_t := (others => '0');
    signal gx_remain_reg : u16_t := (others => '0');
    signal gx_rec_reg : rec_t := (others => '0');
    signal gx_rr_reg : rr_t := (others => '0');
    signal gx_su_reg : su_t := (others => '0');
    signal gx_tag_reg : std_ulogic := '0';               -- the ULPDU is tagged
    signal gx_gen_reg : gen_t := (others => '0');       -- its STag entry's generation at its first piece

    -- STag generations, the cut of a ULPDU between its pieces (ddp_rx_setup.v
    -- has the design): sg_gen_reg counts the s_stag writes, stgen_ram keeps
    -- the count at each entry's last write, tgen_ram a tagged ULPDU's at its
    -- first piece (for its connection); a later piece compares the two in
    -- g_fetch2, and cut_reg marks a cut connection (a clock later: cut_set)
    -- until s_conn.
    signal sg_gen_reg : gen_t := (others => '0');
    signal sg_rd_data, tg_rd_data : std_logic_vector(GEN_W_c - 1 downto 0) := (others => '0');
    signal sg_rd_addr : stagi_t := (others => '0');
    signal tg_wr_reg : std_ulogic := '0';
    signal tg_conn_reg : conn_t := (others => '0');
    signal g_cut : std_ulogic := '0';
    signal cut_reg : std_ulogic_vector(NCONN_c - 1 downto 0) := (others => '0');
    signal cut_set : std_ulogic := '0';                  -- cut_reg(cut_set_conn) is set at this edge
    signal cut_set_conn : conn_t := (others => '0');
    -- A first piece's cut bit as D0 loads it (cut_reg's, or cut_set's that
    -- clock), masking its place bit as D1 takes it.
    signal d0_cut_reg, d0_cutf_reg, d0_place_q : std_ulogic := '0';

    signal d0_valid_reg, d1_active_reg, d2_valid_reg, d3_valid_reg : std_ulogic := '0';
    signal d4_valid_reg : std_ulogic := '0';              -- D4, after D3
    signal d0_take, d2_free, pl_empty : std_ulogic := '0';

    signal g_load, g_pfirst, g_pen, g_place, g_pearly : std_ulogic := '0';
    signal g_pconn : conn_t := (others => '0');
    signal g_dest : addr_t := (others => '0');
    signal g_s : u5_t := (others => '0');
    signal g_remain : u16_t := (others => '0');
    signal g_rec : rec_t := (others => '0');
    signal g_rr : rr_t := (others => '0');
    signal g_su : su_t := (others => '0');
    signal g_r, g_ylo : lane_t := (others => '0');
    signal g_m0 : unsigned(2 downto 0) := (others => '0');
    signal g_bofs : unsigned(BW_c + 2 downto 0) := (others => '0');
    signal g_left : u18_t := (others => '0');
    signal g_q1, g_q0 : u20_t := (others => '0');
    signal g_lo, g_hi, g_win0, g_win1 : keep_t := (others => '0');

    signal d0_first_reg, d0_en_reg, d0_place_reg, d0_early_reg : std_ulogic := '0';
    signal d0_conn_reg : conn_t := (others => '0');
    signal d0_dest_reg : addr_t := (others => '0');
    signal d0_s_reg : u5_t := (others => '0');
    signal d0_remain_reg : u16_t := (others => '0');
    signal d0_rec_reg : rec_t := (others => '0');
    signal d0_rr_reg : rr_t := (others => '0');
    signal d0_r_reg : lane_t := (others => '0');
    signal d0_win0_reg, d0_win1_reg, d0_lo_reg, d0_hi_reg : keep_t := (others => '0');
    signal d0_q0_reg, d0_q1_reg : u20_t := (others => '0');
    signal d0_left_reg : u18_t := (others => '0');
    signal d0_waddr_reg : addr_t := (others => '0');
    signal d0_bofs_reg : bofs_t := (others => '0');
    signal d0_wst_reg : std_ulogic := '0';

    -- D1.
    signal d_state_reg : u2_t := D_DATA_c;
    signal d_first_reg, d_en_reg, d_place_reg, d_last_reg, d_early_reg : std_ulogic := '0';
    signal d_dest_reg : addr_t := (others => '0');
    signal d_s_reg : u5_t := (others => '0');
    signal d_remain_reg : u16_t := (others => '0');
    signal d_rec_reg : rec_t := (others => '0');
    signal d_rr_reg : rr_t := (others => '0');
    signal d_r_reg : lane_t := (others => '0');
    signal d_win_reg, d_winn_reg, d_lo_reg, d_hi_reg : keep_t := (others => '0');
    signal d_wne_reg, d_wnen_reg : std_ulogic := '0';     -- the masks are not empty
    signal d_q0_reg, d_q1_reg : u20_t := (others => '0');   -- window ends minus (output beat + 2)
    signal d_waddr_reg : addr_t := (others => '0');
    signal d_wst_reg : std_ulogic := '0';                 -- the output beat is the window's first (m0) or later
    signal d_bofs_reg : bofs_t := (others => '0');        -- output beat's place in its BURST block
    signal d_left_reg : u18_t := (others => '0');         -- output beats to the end of the ULPDU's payload
    signal d_bleft_reg : bofs_t := (others => '0');       -- beats left in the open burst (< BURST)
    signal d_k_reg : u13_t := (others => '0');            -- input beat index (8192 at W=64)
    signal d_prev_reg : data_t := (others => '0');
    signal d_prevk_reg : keep_t := (others => '0');
    signal d_octs_reg : u17_t := (others => '0');         -- octets of the piece

    signal d_cur_data : data_t := (others => '0');
    signal d_cur_keep : keep_t := (others => '0');
    signal d_cur_tlast, d_cur_ulast, out_ok : std_ulogic := '0';

    signal ob_data, fl_data : data_t := (others => '0');
    signal ob_strb, fl_strb : keep_t := (others => '0');

    -- left = 0, 1, 2 and bleft = 0, 1, 2 are registers of their own, kept
    -- with the counts.
    signal f_left0 : std_ulogic := '1';
    signal f_left1, f_left2 : std_ulogic := '0';
    signal f_bl0 : std_ulogic := '1';
    signal f_bl1, f_bl2 : std_ulogic := '0';
    signal f_left3, f_left4, f_bl3 : std_ulogic := '0';
    signal f_nb : bofs_t := (others => '0');
    signal f_bend, f_bend1, f_lge : std_ulogic := '0';
    signal f_llo, f_llom1 : unsigned(BW_c downto 0) := (others => '0');
    signal f_nbm1 : u8_t := (others => '0');
    signal f_nbm1_0, f_nbm1_1, f_nbm1_2 : std_ulogic := '0';

    -- The counters' steps, from their registers alone.
    signal d_leftm1, d_leftm2 : u18_t := (others => '0');
    signal d_leftm2h : u17_t := (others => '0');
    signal d_k1 : u13_t := (others => '0');
    signal d_q0m1, d_q1m1 : u20_t := (others => '0');
    signal d_wan : unsigned(ADDR_W - LG_c - 1 downto 0) := (others => '0');
    signal d_waddr_n : addr_t := (others => '0');
    signal d_prime : std_ulogic := '0';
    signal d0_q0m1, d0_q1m1 : u20_t := (others => '0');
    signal d0_wan : unsigned(ADDR_W - LG_c - 1 downto 0) := (others => '0');
    signal d0_win2 : keep_t := (others => '0');

    signal d_beat, d_wr, d_end, d_aw, d_go : std_ulogic := '0';
    signal d_wrx, d_lft_n0x, d_bl_n0x, d_bl_n1x : std_ulogic := '0';
    signal d_t_end1, d_t_w2, d_t_w2b, d_t_fl : std_ulogic := '0';
    signal d_state_next : u2_t := (others => '0');
    signal d_rr_next : rr_t := (others => '0');
    signal d_octs : u17_t := (others => '0');
    signal d_nw : u2_t := (others => '0');

    -- D2, D3, D4.
    signal e2_last_reg, e2_en_reg, e2_place_reg, e2_early_reg : std_ulogic := '0';
    signal e2_conn_reg : conn_t := (others => '0');
    signal e2_dest_reg : addr_t := (others => '0');
    signal e2_s_reg : u5_t := (others => '0');
    signal e2_octs_reg : u17_t := (others => '0');
    signal e2_remain_reg : u16_t := (others => '0');
    signal e2_rec_reg : rec_t := (others => '0');
    signal e2_rr_reg : rr_t := (others => '0');
    signal e2_diff : u33_t := (others => '0');            -- octs >= s & octs - s
    signal d2_done : std_ulogic := '0';

    signal e3_place_reg, e3_pos_reg : std_ulogic := '0';
    signal e3_conn_reg : conn_t := (others => '0');
    signal e3_dest_reg : addr_t := (others => '0');
    signal e3_remain_reg : u16_t := (others => '0');
    signal e3_diff_reg : u17_t := (others => '0');
    signal e3_rec_reg : rec_t := (others => '0');
    signal e3_rr_reg : rr_t := (others => '0');
    signal e3_hi1 : unsigned(ADDR_W - 18 downto 0) := (others => '0');
    signal e3_rd : u33_t := (others => '0');

    signal e4_place_reg, e4_pos_reg, e4_big_reg : std_ulogic := '0';
    signal e4_conn_reg : conn_t := (others => '0');
    signal e4_dest_reg : addr_t := (others => '0');
    signal e4_hi1_reg : unsigned(ADDR_W - 18 downto 0) := (others => '0');
    signal e4_nd_reg, e4_nr_reg : u33_t := (others => '0');   -- (bits 17..0 used)
    signal e4_remain_reg, e4_rd_reg : u16_t := (others => '0');
    signal e4_rec_reg : rec_t := (others => '0');
    signal e4_rr_reg : rr_t := (others => '0');
    signal e4_nxt : addr_t := (others => '0');
    signal e4_left : u16_t := (others => '0');

    -- --- configuration ---------------------------------------------------------------

    signal all_idle, conn_ready, stag_ready, post_ready : std_ulogic := '0';
    signal wq_busy, fence_idle : std_ulogic := '0';
    -- The clear of the tables after reset (ddp_rx_tables.v).
    constant CLR_AW_c : positive := CONN_W + STAG_AW - imin(CONN_W, STAG_AW);   -- the larger
    signal clr_busy_reg : std_ulogic := '0';
    signal clr_addr_reg : unsigned(CLR_AW_c - 1 downto 0) := (others => '0');
    signal cf_conn, cf_stag, cf_post : std_ulogic := '0';
    signal o_conn_reg : conn_t := (others => '0');
    signal o_qn_reg : u2_t := (others => '0');
    signal o_ent_reg : rg_t := (others => '0');
    signal o_first : u32_t := (others => '0');
    signal o_cnt : qcnt_t := (others => '0');
    signal o_ok : std_ulogic := '0';
    signal o_cx : cx_t := (others => '0');

    -- --- delivery ----------------------------------------------------------------------

    signal cpl_valid_reg : std_ulogic := '0';
    signal err_valid_reg : std_ulogic := '0';
    signal ev_conn_reg : conn_t := (others => '0');
    signal ev_rec_reg : rec_t := (others => '0');
    signal ev_rr_reg : rr_t := (others => '0');
    signal ev_err_reg : w16_t := (others => '0');

    -- V0: the oldest undelivered record, with its connection's dead and
    -- herr bits (see the Verilog), and the changes to those bits a clock ago.
    signal v0_valid_reg : std_ulogic := '0';
    signal v0_data_reg : std_logic_vector(RF_W_c - 1 downto 0) := (others => '0');
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
    signal rf_rec : rec_t := (others => '0');
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
    signal rq_push, rs_busy, v0_stale, v0_cstale : std_ulogic := '0';

    -- --- status pulses ---------------------------------------------------------------

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

    -- --- tables ----------------------------------------------------------------------

    ctx_ram : entity work.sdp_ram
        generic map (WIDTH => CX_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => cx_wr_en, wr_addr => cx_wr_addr, wr_data => cx_wr_data,
            rd_en => cx_rd_en, rd_addr => cx_rd_addr, rd_data => cx_rd_data
        );

    -- The placement context, written at the end of every piece that does not
    -- end its ULPDU and read by the next piece of the same ULPDU.
    place_ram : entity work.sdp_ram
        generic map (WIDTH => DX_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => dx_wr_en, wr_addr => dx_wr_addr, wr_data => dx_wr_data,
            rd_en => dx_rd_en, rd_addr => dx_rd_addr, rd_data => dx_rd_data
        );

    -- STag generations (ddp_rx_setup.v): each entry's at its last write,
    -- and a tagged ULPDU's at its first piece, for its connection.
    stgen_ram : entity work.sdp_ram
        generic map (WIDTH => GEN_W_c, ADDR_W => STAG_AW)
        port map (
            clk => clk,
            wr_en => cf_stag, wr_addr => s_stag_index, wr_data => sg_gen_reg,
            rd_en => '1', rd_addr => sg_rd_addr, rd_data => sg_rd_data
        );

    tgen_ram : entity work.sdp_ram
        generic map (WIDTH => GEN_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => tg_wr_reg, wr_addr => tg_conn_reg, wr_data => sg_rd_data,
            rd_en => dx_rd_en, rd_addr => dx_rd_addr, rd_data => tg_rd_data
        );

    stag_ram : entity work.sdp_ram
        generic map (WIDTH => ST_W_c, ADDR_W => STAG_AW)
        port map (
            clk => clk,
            wr_en => st_wr_en, wr_addr => st_wr_addr, wr_data => st_wr_data,
            rd_en => st_rd_en, rd_addr => st_rd_addr, rd_data => st_rd_data
        );

    ring_ram : entity work.sdp_ram
        generic map (WIDTH => RG_W_c, ADDR_W => RG_AW_c)
        port map (
            clk => clk,
            wr_en => rg_wr_en, wr_addr => rg_wr_addr, wr_data => rg_wr_data,
            rd_en => rg_rd_en, rd_addr => rg_rd_addr, rd_data => rg_rd_data
        );

    -- --- intake: beats into df_fifo, one header record per piece into hf_fifo --------

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

    df_in_data <= s_axis_tdata & s_axis_tkeep & s_axis_tlast & i_ulast;

    df_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => DF_W_c, AW => 4)
        port map (
            clk => clk, rst => rst,
            in_data => df_in_data, in_valid => i_take and not i_drop0, in_ready => df_in_ready,
            in_data2 => df_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => df_out, out_valid => df_out_valid, out_ready => df_out_ready
        );

    hf_in_data <= i_drop & i_user(17 + CONN_W) & std_ulogic_vector(i_ns) & i_user(16 + CONN_W downto 0) & i_hdr;

    -- The record of the piece at H: hf_fifo's head, or, when hf_fifo is
    -- empty and the check pipeline moves, the record being made (h_thru:
    -- it goes straight on to C1 and never into hf_fifo, a clock saved).
    h_thru <= i_hpush and (not hf_out_valid) and c_adv;
    h_valid <= hf_out_valid or i_hpush;
    h_rec <= hf_out when hf_out_valid = '1' else hf_in_data;

    hf_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => HF_W_c, AW => 3)
        port map (
            clk => clk, rst => rst,
            in_data => hf_in_data, in_valid => i_hpush and not h_thru, in_ready => hf_in_ready,
            in_data2 => hf_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => hf_out, out_valid => hf_out_valid, out_ready => c_adv
        );

    -- --- check pipeline: H (table reads), C1, C1b (checks), C2 (decision) -------------
    --
    -- One piece a clock; everything moves together (c_adv), when the
    -- descriptor queue has room. C2 takes the effects of the three
    -- decisions ahead that the table reads missed from hs0..hs2.

    c_adv <= dc_in_ready;

    hf_conn <= h_rec(145 + CONN_W - 1 downto 145);
    hf_hdr <= h_rec(143 downto 0);
    hf_idx32 <= be32(hf_hdr, 2);

    p_c1_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                c1_valid_reg <= h_valid;
                c1_rec_reg <= h_rec;
            end if;
            if rst = '1' then
                c1_valid_reg <= '0';
            end if;
        end if;
    end process p_c1_reg;

    -- C1: the header's fields, the context and the table entries.
    p1_drop <= c1_rec_reg(HF_W_c - 1);
    p1_early <= c1_rec_reg(HF_W_c - 2);
    p1_short <= c1_rec_reg(HF_W_c - 3);
    p1_n <= unsigned(c1_rec_reg(HF_W_c - 4 downto HF_W_c - 19));
    p1_conn <= c1_rec_reg(145 + CONN_W - 1 downto 145);
    p1_first <= c1_rec_reg(144);

    p_c1 : process (all) is
        variable hdr : hdr_t;
        variable t : std_ulogic;
        variable dv, rv, opqn : u2_t;
        variable op : u4_t;
        variable stag, qn, msn, mo : u32_t;
        variable to64 : u64_t;
        variable optag : std_ulogic;
        variable n : u16_t;
        variable q : q_t;
        variable first : u32_t;
        variable cx : std_ulogic_vector(CX_W_c - 1 downto 0);
        variable st : st_t;
        variable rg : rg_t;
        variable st_valid, st_bound : std_ulogic;
        variable st_key : std_ulogic_vector(7 downto 0);
        variable st_pd : w32_t;
        variable st_conn : conn_t;
        variable st_base : u64_t;
        variable st_len, rg_len : u32_t;
        variable cnt : qcnt_t;
        variable x_to, x_nbase, x_n, x_mo, x_nlen, x_nrglen, x_staddr, x_rgaddr : u72_t;
        variable cs, cs2 : u144_t;
        variable sg : sg4_t;
        variable uz, z : std_ulogic_vector(3 downto 0);
        variable low : low4_t;
        variable cm : cm4_t;
        variable kj : u32_t;
        variable fl, dl : unsigned(LQ_c downto 0);   -- first + j, MSN - (first + j): low bits, carry/borrow
        variable hc : u2_t;
    begin
        hdr := c1_rec_reg(143 downto 0);
        t := hdr(7);
        dv := unsigned(hdr(1 downto 0));
        rv := unsigned(hdr(15 downto 14));
        op := unsigned(hdr(11 downto 8));
        stag := be32(hdr, 2);           -- the STag, or a Send with Invalidate's
        to64 := be32(hdr, 6) & be32(hdr, 10);
        qn := be32(hdr, 6);
        msn := be32(hdr, 10);
        mo := be32(hdr, 14);
        n := p1_n;
        h_t <= t;
        h_l <= hdr(6);
        h_op <= op;
        h_stag <= stag;
        h_qn <= qn;
        h_msn <= msn;
        h_n <= n;
        -- The header's length, less the beat that was not queued for
        -- placement (drop).
        if t = '1' and p1_drop = '1' then
            h_hlen <= to_unsigned(HL14D_c, 5);
        elsif t = '1' then
            h_hlen <= to_unsigned(14, 5);
        elsif p1_drop = '1' then
            h_hlen <= to_unsigned(HL18D_c, 5);
        else
            h_hlen <= to_unsigned(18, 5);
        end if;
        optag := to_sl(op = 0 or op = 2);
        if op = 1 then
            opqn := "01";
        elsif op = 7 then
            opqn := "10";
        else
            opqn := "00";
        end if;
        -- rdmap.ClassifyHeader's order, after ddp.ParseHeader's length check.
        h_cerr <= '1';
        if p1_short = '1' then
            h_cerr_code <= ERR_RDMAP_STREAM_CATASTROPHIC;          -- RDMAP Remote Operation: catastrophic, stream
        elsif dv /= 1 then
            if t = '1' then
                h_cerr_code <= ERR_DDP_TAGGED_INVALID_VERSION;      -- DDP: invalid DDP version
            else
                h_cerr_code <= ERR_DDP_UNTAGGED_INVALID_VERSION;
            end if;
        elsif rv /= 1 then
            h_cerr_code <= ERR_RDMAP_INVALID_VERSION;          -- RDMAP: invalid RDMAP version
        elsif op(3) = '1' or optag /= t then
            h_cerr_code <= ERR_RDMAP_UNEXPECTED_OPCODE;          -- RDMAP: unexpected opcode
        elsif t = '0' and qn > 2 then
            h_cerr_code <= ERR_DDP_INVALID_QN;          -- DDP: invalid QN
        elsif t = '0' and qn(1 downto 0) /= opqn then
            h_cerr_code <= ERR_RDMAP_UNEXPECTED_OPCODE;
        else
            h_cerr <= '0';
            h_cerr_code <= x"0000";
        end if;
        cx := cx_rd_data;
        q := cx_q(cx(3 * Q_W_c - 1 downto 0), std_ulogic_vector(qn(1 downto 0)));
        first := unsigned(q(Q_W_c - 1 downto RQ_AW + 1));
        cnt := unsigned(q(RQ_AW downto 0));
        h_cnt <= cnt;

        -- c1_arith: the STag entry and the posted buffer (see the comment at
        -- the C1 results above).
        st := st_rd_data;
        rg := rg_rd_data;
        st_valid := st(ST_W_c - 1);
        st_key := st(ADDR_W + 138 + CONN_W downto ADDR_W + 131 + CONN_W);
        st_pd := st(ADDR_W + 130 + CONN_W downto ADDR_W + 99 + CONN_W);
        st_bound := st(ADDR_W + 98 + CONN_W);
        st_conn := st(ADDR_W + 97 + CONN_W downto ADDR_W + 98);
        st_acc0 <= st(ADDR_W + 96);
        st_base := unsigned(st(ADDR_W + 95 downto ADDR_W + 32));
        st_len := unsigned(st(ADDR_W + 31 downto ADDR_W));
        rg_len := unsigned(rg(ID_W + 31 downto ID_W));
        rg_id <= rg(ID_W - 1 downto 0);
        x_to := resize(to64, 72);
        x_nbase := not resize(st_base, 72);
        x_n := resize(n, 72);
        x_mo := resize(mo, 72);
        x_nlen := not resize(st_len, 72);
        x_nrglen := not resize(rg_len, 72);
        x_staddr := resize(unsigned(st(ADDR_W - 1 downto 0)), 72);
        x_rgaddr := resize(unsigned(rg(RG_W_c - 1 downto ID_W + 32)), 72);
        -- TO < base: TO - base is negative.
        a_lt <= sum72a(x_to, x_nbase, '1');
        -- TO + n > base + len: TO + n - base - len - 1 (TO + n + not base +
        -- not len + 1) is not negative.
        cs := csa72(x_to, x_n, x_nbase);
        cs2 := csa72(cs(143 downto 72), cs(71 downto 0), x_nlen);
        a_gt <= sum72a(cs2(143 downto 72), cs2(71 downto 0) or to_unsigned(1, 72), '0');
        -- The host address: addr + TO - base (mod 2**64), or addr + MO.
        cs := csa72(x_staddr, x_to, x_nbase);
        a_dt <= sum72a(cs(143 downto 72), cs(71 downto 0) or to_unsigned(1, 72), '0');
        a_du <= sum72a(x_rgaddr, x_mo, '0');
        -- MO + n, and MO + n > the buffer's length: MO + n - len - 1 not
        -- negative.
        a_mon <= sum72a(x_mo, x_n, '0');
        cs := csa72(x_mo, x_n, x_nrglen);
        a_long <= sum72a(cs(143 downto 72), cs(71 downto 0), '0');
        -- A Read Request in one segment: MO 0 and 28 octets (rdmap.DeliveredReadRequest).
        a_rr_eq <= to_sl(mo = 0 and n = 28);
        a_msn1 <= fadd(msn, to_unsigned(0, 32), '1');
        -- TO + n carries out of 64 bits (n < 2**16).
        a_wrap <= to_sl(to64(63 downto 16) = (63 downto 16 => '1'))
                  and gt33(resize(to64(15 downto 0), 33), resize(not n, 33));
        a_mo_gt <= gt33('0' & mo, '0' & rg_len);
        c1_stag_bad <= (not st_valid) or to_sl(st_key /= std_ulogic_vector(stag(7 downto 0)))
                       or to_sl(shift_right(stag, 8 + STAG_AW) /= 0);
        c1_assoc_bad <= to_sl(st_pd /= cx(CX_W_c - 2 downto CX_W_c - 33))
                        or (st_bound and to_sl(st_conn /= p1_conn));
        -- d_j = MSN - first - j = MSN + not first + (1 - j), for j
        -- deliveries of the queue that the context read has not seen (j =
        -- 0..3).
        for j in 0 to 3 loop
            kj := to_unsigned(1, 32) - to_unsigned(j, 32);
            cs := csa72(resize(msn, 72), resize(not first, 72), resize(kj, 72));
            sg(162 * j + 161 downto 162 * j) := sum72a(cs(143 downto 72) and MASK32_c,
                                                       cs(71 downto 0) and MASK32_c, '0');
            -- d_j = 0: MSN = first + j. d_j's bits LQ.. zero: MSN's bits LQ..
            -- are first + j's plus the borrow of d_j's low bits, that is
            -- first's plus hc (0..2). Both as equalities (sumeq) on MSN and
            -- first, not on the sums.
            z(j) := sumeq(resize(first, 72), to_unsigned(j, 72), '0', resize(msn, 72), MASK32_c);
            fl := ('0' & first(LQ_c - 1 downto 0)) + to_unsigned(j, LQ_c + 1);
            dl := ('0' & msn(LQ_c - 1 downto 0)) - ('0' & fl(LQ_c - 1 downto 0));
            hc := ('0' & fl(LQ_c)) + ('0' & dl(LQ_c));
            uz(j) := sumeq(shift_right(resize(first, 72), LQ_c), resize(hc, 72), '0',
                           shift_right(resize(msn, 72), LQ_c), MASK_HI_c);
            low(LQ_c * j + LQ_c - 1 downto LQ_c * j) := dl(LQ_c - 1 downto 0);
            cm((LQ_c + 1) * j + LQ_c downto (LQ_c + 1) * j) := ('0' & cnt) - to_unsigned(j, LQ_c + 1);
        end loop;
        a_sg <= sg;
        a_z <= z;
        a_uz <= uz;
        a_low <= low;
        a_cm <= cm;
    end process p_c1;

    -- C1b registers.
    p_c1b_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                b_valid_reg <= c1_valid_reg;
                b_conn_reg <= p1_conn;
                b_first_reg <= p1_first;
                b_early_reg <= p1_early;
                b_cx_reg <= cx_rd_data;
                b_t_reg <= h_t;
                b_l_reg <= h_l;
                b_op_reg <= h_op;
                b_stag_reg <= h_stag;
                b_msn_reg <= h_msn;
                b_msn1_reg <= a_msn1(31 downto 0);
                b_qn_reg <= h_qn(1 downto 0);
                b_n_reg <= h_n;
                b_hlen_reg <= h_hlen;
                b_cerr_reg <= h_cerr;
                b_cerr_code_reg <= h_cerr_code;
                b_stag_bad_reg <= c1_stag_bad;
                b_assoc_bad_reg <= c1_assoc_bad;
                b_acc_reg <= not st_acc0;
                b_wrap_reg <= a_wrap;
                b_mo_gt_reg <= a_mo_gt;
                b_rr_eq_reg <= a_rr_eq;
                b_lt_a <= a_lt;
                b_gt_a <= a_gt;
                b_dt_a <= a_dt;
                b_du_a <= a_du;
                b_mon_a <= a_mon;
                b_long_a <= a_long;
                b_sg_a <= a_sg;
                b_uz_reg <= a_uz;
                b_z_reg <= a_z;
                b_low_reg <= a_low;
                b_cm_reg <= a_cm;
                b_id_reg <= rg_id;
                b_st_reg <= st_rd_data(ST_W_c - 2 downto 0);
            end if;
            if rst = '1' then
                b_valid_reg <= '0';
            end if;
        end if;
    end process p_c1b_reg;

    -- C1b: the sums' second clock, and the window checks: d_j outside 0 ..
    -- count - j - 1 (its bits above RQ_AW not zero, or its low bits at or
    -- past count - j).
    p_c1b_sums : process (all) is
        variable sg : u73_t;
    begin
        bs_lt <= sum72b(b_lt_a);
        bs_gt <= sum72b(b_gt_a);
        bs_dt <= sum72b(b_dt_a);
        bs_du <= sum72b(b_du_a);
        bs_mon <= sum72b(b_mon_a);
        bs_long <= sum72b(b_long_a);
        for j in 0 to 3 loop
            sg := sum72b(b_sg_a(162 * j + 161 downto 162 * j));
            bs_behind(j) <= sg(31);
            bs_nobuf(j) <= (not b_uz_reg(j))
                           or to_sl(('0' & b_low_reg(LQ_c * j + LQ_c - 1 downto LQ_c * j))
                                    >= b_cm_reg((LQ_c + 1) * j + LQ_c downto (LQ_c + 1) * j));
        end loop;
    end process p_c1b_sums;

    -- C2 registers.
    p_c2_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                c2_valid_reg <= b_valid_reg;
                c2_conn_reg <= b_conn_reg;
                c2_first_reg <= b_first_reg;
                c2_early_reg <= b_early_reg;
                c2_cx_reg <= b_cx_reg;
                k_tagged_reg <= b_t_reg;
                k_l_reg <= b_l_reg;
                k_op_reg <= b_op_reg;
                k_stag_reg <= b_stag_reg;
                k_msn_reg <= b_msn_reg;
                k_msn1_reg <= b_msn1_reg;
                k_qn_reg <= b_qn_reg;
                k_n_reg <= b_n_reg;
                k_hlen_reg <= b_hlen_reg;
                k_cerr_reg <= b_cerr_reg;
                k_cerr_code_reg <= b_cerr_code_reg;
                -- ddp.STagTable.checkLocked (RFC 5041 7.1, 8.2) for the whole
                -- segment, and ddp.Sink.checkUntagged.
                e_t_inv_reg <= b_stag_bad_reg;
                e_t_assoc_reg <= b_assoc_bad_reg;
                e_t_acc_reg <= b_acc_reg;
                e_t_wrap_reg <= b_wrap_reg;
                e_t_bounds_reg <= bs_lt(71) or not bs_gt(71);
                e_dt_reg <= bs_dt(ADDR_W - 1 downto 0);
                e_u_nobuf_reg <= bs_nobuf;
                e_u_behind_reg <= bs_behind;
                e_u_lorder_reg <= (3 downto 0 => b_l_reg) and not b_z_reg;
                e_u_mo_reg <= b_mo_gt_reg;
                e_u_long_reg <= not bs_long(71);
                e_du_reg <= bs_du(ADDR_W - 1 downto 0);
                e_len_reg <= bs_mon(31 downto 0);
                e_id_reg <= b_id_reg;
                -- rdmap.Invalidate: ddp.STagTable.InvalidateRemote's checks.
                e_i_bad_reg <= b_stag_bad_reg or b_assoc_bad_reg;
                e_rr_bad_reg <= not b_rr_eq_reg;
                e_st_reg <= b_st_reg;
            end if;
            if rst = '1' then
                c2_valid_reg <= '0';
            end if;
        end if;
    end process p_c2_reg;

    k_idx <= std_ulogic_vector(k_stag_reg(8 + STAG_AW - 1 downto 8));
    b_idx <= std_ulogic_vector(b_stag_reg(8 + STAG_AW - 1 downto 8));

    p_herr_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                -- (cut_reg too: a cut stream places nothing more.)
                b_hgrp_reg <= herr_group(herr_reg or cut_reg, p1_conn) or herr_group_set(p1_conn, herr_set, herr_set_conn)
                              or herr_group_set(p1_conn, cut_set, cut_set_conn);
                c2_herr_reg <= herr_bit(b_hgrp_reg, b_conn_reg) or (herr_set and to_sl(herr_set_conn = b_conn_reg))
                               or (cut_set and to_sl(cut_set_conn = b_conn_reg));
            else
                b_hgrp_reg <= b_hgrp_reg or herr_group_set(b_conn_reg, herr_set, herr_set_conn)
                              or herr_group_set(b_conn_reg, cut_set, cut_set_conn);
                c2_herr_reg <= c2_herr_reg or (herr_set and to_sl(herr_set_conn = c2_conn_reg))
                               or (cut_set and to_sl(cut_set_conn = c2_conn_reg));
            end if;
        end if;
    end process p_herr_reg;

    -- C2: decision, with the effects of the decisions the tables had not seen.
    p_c2 : process (all) is
        variable same0, same1, same2 : boolean;
        variable f_cx : cx_t;
        variable pops : natural range 0 to 3;
        variable killed : boolean;
        variable t_inv, i_bad, u_nobuf, u_behind, u_lorder : std_ulogic;
        variable en, fail : std_ulogic;
        variable kind : u2_t;
        variable err : w16_t;
        variable place, pop, inval : std_ulogic;
        variable dest : addr_t;
        variable cx : cx_t;
        variable nz : std_ulogic;
        variable inv_stag : u32_t;
    begin
        same0 := fs_reg(0) = '1';
        same1 := fs_reg(1) = '1';
        same2 := fs_reg(2) = '1';
        if same0 then
            f_cx := hs0_cx_reg;
        elsif same1 then
            f_cx := hs1_cx_reg;
        elsif same2 then
            f_cx := hs2_cx_reg;
        else
            f_cx := c2_cx_reg;
        end if;
        pops := 0;
        if fq_reg(0) = '1' and hs0_pop_reg = '1' then
            pops := pops + 1;
        end if;
        if fq_reg(1) = '1' and hs1_pop_reg = '1' then
            pops := pops + 1;
        end if;
        if fq_reg(2) = '1' and hs2_pop_reg = '1' then
            pops := pops + 1;
        end if;
        killed := (fk_reg(0) = '1' and hs0_inv_reg = '1') or (fk_reg(1) = '1' and hs1_inv_reg = '1')
                  or (fk_reg(2) = '1' and hs2_inv_reg = '1');
        t_inv := e_t_inv_reg or to_sl(killed);
        i_bad := e_i_bad_reg or to_sl(killed);
        u_nobuf := e_u_nobuf_reg(pops);
        u_behind := e_u_behind_reg(pops);
        u_lorder := e_u_lorder_reg(pops);

        en := c2_cx_reg(CX_W_c - 1);
        fail := f_cx(CX_W_c - 34);
        nz := to_sl(k_n_reg /= 0);
        kind := K_NONE_c;
        err := x"0000";
        place := '0';
        pop := '0';
        inval := '0';
        dest := e_du_reg;
        if fail = '1' or en = '0' or c2_herr_reg = '1' then
            kind := K_NONE_c;            -- the stream has failed: dropped
        elsif k_cerr_reg = '1' then
            kind := K_ERR_c;
            err := k_cerr_code_reg;
        elsif k_tagged_reg = '1' then
            dest := e_dt_reg;
            if nz = '1' and t_inv = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_INVALID_STAG;          -- DDP tagged: invalid STag
            elsif nz = '1' and e_t_assoc_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_STAG_NOT_ASSOCIATED;          -- DDP tagged: STag not associated with stream
            elsif nz = '1' and e_t_acc_reg = '1' then
                kind := K_ERR_c;
                err := ERR_RDMAP_ACCESS_RIGHTS;          -- RDMAP remote protection: access rights
            elsif nz = '1' and e_t_wrap_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_TO_WRAP;          -- DDP tagged: TO wrap
            elsif nz = '1' and e_t_bounds_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_BASE_BOUNDS;          -- DDP tagged: base or bounds
            else
                place := nz;
                if k_l_reg = '1' then
                    kind := K_CPL_c;
                else
                    kind := K_NONE_c;
                end if;
            end if;
        else
            if u_nobuf = '1' then
                kind := K_ERR_c;
                if u_behind = '1' then
                    err := ERR_DDP_MSN_RANGE;
                else
                    err := ERR_DDP_NO_BUFFER;
                end if;
            elsif e_u_mo_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_INVALID_MO;          -- DDP untagged: invalid MO
            elsif e_u_long_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_TOO_LONG;          -- DDP untagged: message too long
            elsif u_lorder = '1' and c2_early_reg = '0' then
                kind := K_ERR_c;
                err := ERR_DDP_MSN_RANGE;          -- DDP untagged: MSN range
            else
                place := nz;
                pop := k_l_reg;
                if k_l_reg = '0' then
                    kind := K_NONE_c;
                elsif k_op_reg = 1 and e_rr_bad_reg = '1' then
                    kind := K_ERR_c;
                    err := ERR_RDMAP_STREAM_CATASTROPHIC;      -- rdmap.DeliveredReadRequest: not one 28-octet segment
                elsif k_op_reg = 7 then
                    kind := K_TERM_c;
                elsif (k_op_reg = 4 or k_op_reg = 6) and i_bad = '1' then
                    kind := K_ERR_c;
                    err := ERR_RDMAP_CANNOT_INVALIDATE;      -- RDMAP remote protection: cannot invalidate
                else
                    kind := K_CPL_c;
                    inval := to_sl(k_op_reg = 4 or k_op_reg = 6);
                end if;
            end if;
        end if;
        if c2_early_reg = '1' then
            -- Placed early (ddp.Sink.Place): the checks above, but for the
            -- last-segment order, decide whether it is placed, and that is
            -- all. Nothing is reported, delivered or changed.
            kind := K_NONE_c;
            err := x"0000";
            pop := '0';
            inval := '0';
        end if;
        cx := c2_cx_reg(CX_W_c - 1 downto CX_W_c - 33)
              & (fail or to_sl(kind = K_ERR_c) or to_sl(kind = K_TERM_c))
              & f_cx(3 * Q_W_c - 1 downto 0);
        if pop = '1' then
            case k_qn_reg is
                when "01" =>
                    cx(2 * Q_W_c - 1 downto Q_W_c) := q_pop(unsigned(f_cx(Q_W_c + RQ_AW downto Q_W_c)), k_msn1_reg);
                when "10" =>
                    cx(3 * Q_W_c - 1 downto 2 * Q_W_c) :=
                        q_pop(unsigned(f_cx(2 * Q_W_c + RQ_AW downto 2 * Q_W_c)), k_msn1_reg);
                when others =>
                    cx(Q_W_c - 1 downto 0) := q_pop(unsigned(f_cx(RQ_AW downto 0)), k_msn1_reg);
            end case;
        end if;
        if k_tagged_reg = '1' then
            r_rec <= std_ulogic_vector(kind) & std_ulogic_vector(k_op_reg) & '1' & "00"
                     & (63 downto 0 => '0') & (ID_W - 1 downto 0 => '0')
                     & std_ulogic_vector(k_stag_reg) & (31 downto 0 => '0') & err;
        else
            if inval = '1' then
                inv_stag := k_stag_reg;
            else
                inv_stag := (others => '0');
            end if;
            r_rec <= std_ulogic_vector(kind) & std_ulogic_vector(k_op_reg) & '0' & std_ulogic_vector(k_qn_reg)
                     & std_ulogic_vector(k_msn_reg) & std_ulogic_vector(e_len_reg) & e_id_reg
                     & (31 downto 0 => '0') & std_ulogic_vector(inv_stag) & err;
        end if;
        c_en <= en;
        r_kind <= kind;
        r_place <= place;
        r_pop <= pop;
        r_inval <= inval;
        r_dest <= dest;
        r_cx <= cx;
    end process p_c2;

    c2_go <= c_adv and c2_valid_reg;
    c2_decide <= c2_go and c2_first_reg;

    p_hs_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                hs2_cx_reg <= hs1_cx_reg;
                hs2_pop_reg <= hs1_pop_reg;
                hs2_inv_reg <= hs1_inv_reg;
                hs1_valid_reg <= hs0_valid_reg;
                hs1_conn_reg <= hs0_conn_reg;
                hs1_cx_reg <= hs0_cx_reg;
                hs1_pop_reg <= hs0_pop_reg;
                hs1_qn_reg <= hs0_qn_reg;
                hs1_inv_reg <= hs0_inv_reg;
                hs1_idx_reg <= hs0_idx_reg;
                hs0_valid_reg <= c2_valid_reg and c2_first_reg;
                fs_reg <= (hs1_valid_reg and to_sl(hs1_conn_reg = b_conn_reg))
                          & (hs0_valid_reg and to_sl(hs0_conn_reg = b_conn_reg))
                          & (c2_valid_reg and c2_first_reg and to_sl(c2_conn_reg = b_conn_reg));
                fq_reg <= (hs1_valid_reg and to_sl(hs1_conn_reg = b_conn_reg and hs1_qn_reg = b_qn_reg))
                          & (hs0_valid_reg and to_sl(hs0_conn_reg = b_conn_reg and hs0_qn_reg = b_qn_reg))
                          & (c2_valid_reg and c2_first_reg
                             and to_sl(c2_conn_reg = b_conn_reg and k_qn_reg = b_qn_reg));
                fk_reg <= (hs1_valid_reg and to_sl(hs1_idx_reg = b_idx))
                          & (hs0_valid_reg and to_sl(hs0_idx_reg = b_idx))
                          & (c2_valid_reg and c2_first_reg and to_sl(k_idx = b_idx));
                hs0_conn_reg <= c2_conn_reg;
                hs0_cx_reg <= r_cx;
                hs0_pop_reg <= r_pop;
                hs0_qn_reg <= k_qn_reg;
                hs0_inv_reg <= r_inval;
                hs0_idx_reg <= k_idx;
            end if;
            if rst = '1' then
                hs0_valid_reg <= '0';
                hs1_valid_reg <= '0';
                fs_reg <= "000";
                fq_reg <= "000";
                fk_reg <= "000";
            end if;
        end if;
    end process p_hs_reg;

    -- Descriptors to placement. The placement set-up of a first piece is
    -- worked out here, from the registers alone, for both addresses the
    -- decision may pick (a tagged segment's e_dt or an untagged one's e_du:
    -- the one not picked only matters when nothing is placed), so that D0
    -- only selects it.
    c2_su_t <= pl_setup(e_dt_reg(LG_c - 1 downto 0), k_hlen_reg, k_n_reg);
    c2_su_u <= pl_setup(e_du_reg(LG_c - 1 downto 0), k_hlen_reg, k_n_reg);
    c2_su <= c2_su_t when k_tagged_reg = '1' else c2_su_u;
    dc_in_data <= c2_early_reg & c2_conn_reg & c2_first_reg & c_en & r_place & std_ulogic_vector(r_dest)
                  & std_ulogic_vector(k_hlen_reg) & std_ulogic_vector(k_n_reg) & r_rec & c2_su;

    dc_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => DC_W_c, AW => 2)
        port map (
            clk => clk, rst => rst,
            in_data => dc_in_data, in_valid => c2_go, in_ready => dc_in_ready,
            in_data2 => dc_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => dc_out, out_valid => dc_out_valid, out_ready => dc_out_ready
        );

    -- --- output queues ---------------------------------------------------------------

    aw_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => AWQ_W_c, AW => 2)
        port map (
            clk => clk, rst => rst,
            in_data => aw_in_data, in_valid => aw_in_valid, in_ready => aw_in_ready,
            in_data2 => aw_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => aw_out_data, out_valid => aw_out_valid, out_ready => aw_pop
        );

    w_ok <= to_sl(w_credit_reg > 0) or (to_sl(w_credit_reg = 0) and axi_awvalid);

    m_axi_awid <= "0";
    m_axi_awburst <= "01";                  -- INCR
    m_axi_awcache <= "0011";
    m_axi_awprot <= "010";
    m_axi_awvalid <= axi_awvalid;

    g_axiport : if WR_REQ = 0 generate
        axi_awvalid <= aw_out_valid;
        aw_pop <= m_axi_awready;
        b_valid <= m_axi_bvalid;
        b_resp <= m_axi_bresp;
        m_wr_addr <= (others => '0');
        m_wr_data <= (others => '0');
        m_wr_strb <= (others => '0');
        m_wr_last <= '0';
        m_wr_valid <= '0';
    end generate g_axiport;

    g_wport : if WR_REQ = 0 and AXI_W = DATA_W generate
        -- One queued W beat a bus beat.
        w_go <= w_out_valid and w_ok;
        w_out_ready <= m_axi_wready and w_ok;

        w_fifo : entity work.ddp_rx_fifo
            generic map (WIDTH => W_W_c, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in_data, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w2_in_data, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_out_data, out_valid => w_out_valid, out_ready => w_out_ready
            );

        axi_wlast <= w_out_data(0);
        m_axi_awaddr <= aw_out_data(AWQ_W_c - 1 downto 8);
        m_axi_awlen <= aw_out_data(7 downto 0);
        m_axi_awsize <= std_logic_vector(to_unsigned(LG_c, 3));
        m_axi_wdata <= w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_axi_wstrb <= w_out_data(KEEP_W_c downto 1);
        m_axi_wlast <= axi_wlast;
        m_axi_wvalid <= w_go;
        w_out_last <= w_go and m_axi_wready and axi_wlast;
    elsif WR_REQ = 0 generate
        -- A write port twice as wide: a bus beat carries two queued W beats
        -- (an even one and the odd one after it, by address bit LG) or one;
        -- see the Verilog for the burst arithmetic. Each W beat is queued
        -- with bit LG of its address, the half a burst's first beat takes.
        signal w_in1, w_in2, w_h0x, w_h1 : std_logic_vector(W_W_c downto 0) := (others => '0');
        signal w_h1v : std_ulogic := '0';
        signal w_bfirst_reg : std_ulogic := '1';        -- the next W beat starts its burst
        signal w_odd, w_two, w2_go, w2_take : std_ulogic := '0';
        signal aw_len2 : unsigned(8 downto 0) := (others => '0');
        signal zd, hi_d : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        signal zk, hi_k : std_logic_vector(KEEP_W_c - 1 downto 0) := (others => '0');
    begin
        w_in1 <= w_in_data & w_in_half;
        w_in2 <= w2_in_data & w2_in_half;
        w_out_data <= w_h0x(W_W_c downto 1);
        w_odd <= w_bfirst_reg and w_h0x(0);
        w_two <= (not w_odd) and (not w_out_data(0));
        w2_go <= w_out_valid and (w_odd or w_out_data(0) or w_h1v) and w_ok;
        w2_take <= w2_go and m_axi_wready;
        aw_len2 <= resize(unsigned(aw_out_data(8 + LG_c downto 8 + LG_c)), 9)
                   + resize(unsigned(aw_out_data(7 downto 0)), 9);

        w_fifo : entity work.ddp_rx_fifo2
            generic map (WIDTH => W_W_c + 1, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in1, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w_in2, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_h0x, out_valid => w_out_valid, out_ready => w2_take,
                out_data2 => w_h1, out_valid2 => w_h1v, out_ready2 => w_two
            );

        p_bfirst : process (clk) is
        begin
            if rising_edge(clk) then
                if w2_take = '1' then
                    w_bfirst_reg <= axi_wlast;
                end if;
                if rst = '1' then
                    w_bfirst_reg <= '1';
                end if;
            end if;
        end process p_bfirst;

        axi_wlast <= w_h1(1) when w_two = '1' else w_out_data(0);
        m_axi_awaddr <= aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + 1) & (LG_c downto 0 => '0');
        m_axi_awlen <= std_logic_vector(aw_len2(8 downto 1));
        m_axi_awsize <= std_logic_vector(to_unsigned(LG_c + 1, 3));
        hi_d <= w_h1(DATA_W + KEEP_W_c + 1 downto KEEP_W_c + 2) when w_two = '1' else zd;
        hi_k <= w_h1(KEEP_W_c + 1 downto 2) when w_two = '1' else zk;
        m_axi_wdata <= w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1) & zd when w_odd = '1' else
                       hi_d & w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_axi_wstrb <= w_out_data(KEEP_W_c downto 1) & zk when w_odd = '1' else
                       hi_k & w_out_data(KEEP_W_c downto 1);
        m_axi_wlast <= axi_wlast;
        m_axi_wvalid <= w2_go;
        w_out_last <= w2_take and axi_wlast;
    else generate
        -- The write-request stream (see the Verilog's reqport): two lines a
        -- request from a line address; the oldest queued W beat and, unless
        -- it ends its burst (or when the one behind it is a continuation,
        -- its queue bit set), the one behind it, which a request waits for
        -- but at a burst's first beat. A continuation alone goes
        -- at the first line of the block after its burst's (r_nb_reg).
        signal w_in1, w_in2, w_h0x, w_h1 : std_logic_vector(W_W_c downto 0) := (others => '0');
        signal w_h1v : std_ulogic := '0';
        signal r_k_reg : unsigned(BW_c - 1 downto 0) := (others => '0');      -- W beats of the head burst gone
        signal r_b_reg : unsigned(BQ_AW + 1 downto 0) := (others => '0');     -- bursts gone, B not yet taken
        signal r_nb_reg : unsigned(ADDR_W - LG_c - BW_c - 1 downto 0) := (others => '0');
        signal r_h0last, r_h0cont, r_two, r_go, r_take, r_last, r_burst : std_ulogic := '0';
        -- A request offered as one line and not taken stays one line until
        -- it is: its payload must not change while it waits.
        signal r_one_reg : std_ulogic := '0';
        signal r_line : unsigned(BW_c - 1 downto 0) := (others => '0');
        signal hi_d : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        signal hi_k : std_logic_vector(KEEP_W_c - 1 downto 0) := (others => '0');
    begin
        w_in1 <= w_in_data & '0';
        w_in2 <= w2_in_data & w_in_data(0);
        w_out_data <= w_h0x(W_W_c downto 1);
        r_h0last <= w_out_data(0);
        r_h0cont <= w_h0x(0);
        r_two <= w_h1v and (not r_one_reg) and ((not r_h0last) or w_h1(0));
        r_go <= w_out_valid and (aw_out_valid or r_h0cont) and (r_h0last or w_h1v or to_sl(r_k_reg = 0));
        r_take <= r_go and m_wr_ready;
        r_last <= w_h1(1) when r_two = '1' else r_h0last;
        r_burst <= r_take and r_last and not r_h0cont;
        r_line <= unsigned(aw_out_data(8 + LG_c + BW_c - 1 downto 8 + LG_c)) + r_k_reg;

        w_fifo : entity work.ddp_rx_fifo2
            generic map (WIDTH => W_W_c + 1, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in1, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w_in2, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_h0x, out_valid => w_out_valid, out_ready => r_take,
                out_data2 => w_h1, out_valid2 => w_h1v, out_ready2 => r_two
            );

        p_req : process (clk) is
        begin
            if rising_edge(clk) then
                if r_take = '1' then
                    if r_last = '1' then
                        r_k_reg <= (others => '0');
                    elsif r_two = '1' then
                        r_k_reg <= r_k_reg + 2;
                    else
                        r_k_reg <= r_k_reg + 1;
                    end if;
                end if;
                if r_burst = '1' then
                    r_nb_reg <= unsigned(aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + BW_c)) + 1;
                end if;
                if r_burst = '1' and b_go = '0' then
                    r_b_reg <= r_b_reg + 1;
                elsif r_burst = '0' and b_go = '1' then
                    r_b_reg <= r_b_reg - 1;
                end if;
                r_one_reg <= r_go and (not m_wr_ready) and (not r_two);
                if rst = '1' then
                    r_k_reg <= (others => '0');
                    r_b_reg <= (others => '0');
                    r_one_reg <= '0';
                end if;
            end if;
        end process p_req;

        hi_d <= w_h1(DATA_W + KEEP_W_c + 1 downto KEEP_W_c + 2) when r_two = '1' else (others => '0');
        hi_k <= w_h1(KEEP_W_c + 1 downto 2) when r_two = '1' else (others => '0');
        m_wr_addr <= std_logic_vector(r_nb_reg) & (BW_c + LG_c - 1 downto 0 => '0') when r_h0cont = '1' else
                     aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + BW_c) & std_logic_vector(r_line)
                     & (LG_c - 1 downto 0 => '0');
        m_wr_data <= hi_d & w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_wr_strb <= hi_k & w_out_data(KEEP_W_c downto 1);
        m_wr_last <= r_last;
        m_wr_valid <= r_go;
        aw_pop <= r_burst;
        b_valid <= to_sl(r_b_reg /= 0);
        b_resp <= "00";
        w_out_last <= '0';
        axi_awvalid <= '0';
        m_axi_awaddr <= (others => '0');
        m_axi_awlen <= (others => '0');
        m_axi_awsize <= (others => '0');
        m_axi_wdata <= (others => '0');
        m_axi_wstrb <= (others => '0');
        m_axi_wlast <= '0';
        m_axi_wvalid <= '0';
    end generate g_wport;

    p_credit : process (clk) is
        variable c : signed(4 downto 0);
    begin
        if rising_edge(clk) then
            c := w_credit_reg;
            if axi_awvalid = '1' and m_axi_awready = '1' then
                c := c + 1;
            end if;
            if w_out_last = '1' then
                c := c - 1;
            end if;
            w_credit_reg <= c;
            if rst = '1' then
                w_credit_reg <= (others => '0');
            end if;
        end if;
    end process p_credit;

    rec_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => RF_W_c, AW => REC_AW)
        port map (
            clk => clk, rst => rst,
            in_data => rf_in_data, in_valid => rf_in_valid, in_ready => rf_in_ready,
            in_data2 => rf_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => rf_out_data, out_valid => rf_out_valid, out_ready => rf_out_ready
        );

    -- Bursts whose B response is outstanding: the connection of each, in AW
    -- order. aw_cnt counts the bursts queued, b_cnt the B responses taken.
    bq_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => CONN_W, AW => BQ_AW)
        port map (
            clk => clk, rst => rst,
            in_data => d_conn_reg, in_valid => aw_in_valid, in_ready => bq_in_ready,
            in_data2 => d_conn_reg, in_valid2 => '0', in_ready2 => open,
            out_data => bq_out_data, out_valid => bq_out_valid, out_ready => b_go
        );

    p_bcnt : process (clk) is
    begin
        if rising_edge(clk) then
            if aw_in_valid = '1' and aw_in_ready = '1' then
                aw_cnt_reg <= aw_cnt_reg + 1;
            end if;
            if b_go = '1' then
                b_cnt_reg <= b_cnt1_reg;
                b_cnt1_reg <= b_cnt1_reg + 1;
            end if;
            if rst = '1' then
                aw_cnt_reg <= (others => '0');
                b_cnt_reg <= (others => '0');
                b_cnt1_reg <= to_unsigned(1, MK_W_c);
            end if;
        end if;
    end process p_bcnt;

    -- --- placement: D0 (set-up), D1 (one input beat a clock), D2 (piece end) ---------

    -- A descriptor's fields (the set-up, SU_W_c bits, below the record).
    g_early <= dc_out(DC_W_c - 1);
    g_conn <= dc_out(DC_W_c - 2 downto DC_W_c - 1 - CONN_W);
    g_first <= dc_out(DC_W_c - CONN_W - 2);
    g_en <= dc_out(DC_W_c - CONN_W - 3);
    g_dplace <= dc_out(DC_W_c - CONN_W - 4);
    g_ddest <= unsigned(dc_out(SU_W_c + RECC_W_c + 21 + ADDR_W - 1 downto SU_W_c + RECC_W_c + 21));
    g_ds <= unsigned(dc_out(SU_W_c + RECC_W_c + 20 downto SU_W_c + RECC_W_c + 16));
    g_dremain <= unsigned(dc_out(SU_W_c + RECC_W_c + 15 downto SU_W_c + RECC_W_c));
    g_drec <= dc_out(SU_W_c + RECC_W_c - 1 downto SU_W_c);
    g_dsu <= dc_out(SU_W_c - 1 downto 0);

    pl_empty <= (not d0_valid_reg) and (not d1_active_reg) and (not d2_valid_reg) and (not d3_valid_reg)
                and (not d4_valid_reg) and (not g_fetch_reg) and not g_fetch2_reg;

    dc_out_ready <= dc_out_valid and (not g_fetch_reg) and (not g_fetch2_reg)
                    and sel(g_first, (not d0_valid_reg) or d0_take, pl_empty);

    -- A later piece waits for placement to be empty, then reads where its
    -- ULPDU's last piece ended (g_fetch, one clock) and works out its set-up
    -- from that (g_fetch2, one clock).
    p_g : process (all) is
        variable load, pfirst, pearly, pen, place : std_ulogic;
        variable pconn : conn_t;
        variable dest : addr_t;
        variable s : u5_t;
        variable remain : u16_t;
        variable rec : rec_t;
        variable rr : rr_t;
        variable su : su_t;
    begin
        load := '0';
        pconn := g_conn;
        pfirst := g_first;
        pearly := g_early;
        pen := g_en;
        place := g_dplace;
        dest := g_ddest;
        s := g_ds;
        remain := g_dremain;
        rec := g_drec;
        rr := (others => '0');
        su := g_dsu;
        dx_rd_en <= '0';
        dx_rd_addr <= g_conn;
        if g_fetch2_reg = '1' then
            -- A later piece: carry on where the last piece ended (and stop
            -- if a B error response of the stream comes in meanwhile, or at
            -- the cut: its STag entry was written since the first piece).
            load := '1';
            pconn := g_fconn_reg;
            pfirst := '0';
            pearly := '0';
            pen := g_fen_reg;
            place := gx_place_reg and not (herr_set and to_sl(herr_set_conn = g_fconn_reg)) and not g_cut;
            dest := gx_dest_reg;
            s := (others => '0');
            remain := gx_remain_reg;
            rec := gx_rec_reg;
            if g_cut = '1' then
                rec(RECC_W_c - 1 downto RECC_W_c - 2) := std_ulogic_vector(K_ERR_c);
                rec(15 downto 0) := ERR_DDP_INVALID_STAG;     -- DDP tagged: invalid STag
            end if;
            rr := gx_rr_reg;
            su := gx_su_reg;
        elsif dc_out_ready = '1' and g_first = '1' then
            load := '1';
        elsif dc_out_ready = '1' then
            dx_rd_en <= '1';
        end if;
        g_load <= load;
        g_pconn <= pconn;
        g_pfirst <= pfirst;
        g_pearly <= pearly;
        g_pen <= pen;
        g_place <= place;
        g_dest <= dest;
        g_s <= s;
        g_remain <= remain;
        g_rec <= rec;
        g_rr <= rr;
        g_su <= su;
    end process p_g;

    -- D0: the piece's rotation R = (dest - S) mod N, its write window as
    -- lane masks of output beats 0 and 1 and the counts to the window's
    -- first and last beats, the first write address and the output beats to
    -- the end of the ULPDU's payload. The sums are pl_setup's, made ahead
    -- (C2 for a first piece, g_fetch for a later one); D0 turns them into
    -- masks and flags.
    p_setup : process (all) is
        variable m0z, m0p, m0o, m0g, m1z, m1n, m1o, m1l : std_ulogic;
        variable r, ylo : lane_t;
        variable m0 : unsigned(2 downto 0);
        variable q1 : u20_t;
        variable lo, hi : keep_t;
    begin
        r := unsigned(g_su(SU_W_c - 1 downto SU_W_c - LG_c));
        m0 := unsigned(g_su(SU_W_c - LG_c - 1 downto SU_W_c - LG_c - 3));
        ylo := unsigned(g_su(LG_c + 37 downto 38));
        g_left <= unsigned(g_su(37 downto 20));
        q1 := unsigned(g_su(19 downto 0));
        for b in 0 to KEEP_W_c - 1 loop
            lo(b) := to_sl(b >= to_integer(g_dest(LG_c - 1 downto 0)));
            hi(b) := to_sl(b <= to_integer(ylo));
        end loop;
        -- Beats 0 and 1 against the window: m0 = 0, > 0, = 1, > 1; m1 = q1
        -- + 2 = 0, < 0 (q1 = -3: no payload), = 1, < 1.
        m0z := to_sl(m0 = 0);
        m0p := to_sl(m0 /= 0);
        m0o := to_sl(m0 = 1);
        m0g := to_sl(m0 > 1);
        m1z := to_sl(q1 = x"ffffe");
        m1n := to_sl(q1 = x"ffffd");
        m1o := to_sl(q1 = x"fffff");
        m1l := m1z or m1n;
        g_r <= r;
        g_m0 <= m0;
        g_ylo <= ylo;
        g_q1 <= q1;
        g_lo <= lo;
        g_hi <= hi;
        g_win0 <= win_flags(m0z, m0p, m1z, m1n, lo, hi);
        g_win1 <= win_flags(m0o, m0g, m1o, m1l, lo, hi);
        g_q0 <= resize(m0, 20) - 2;
        g_bofs <= resize(g_dest(LG_c + BW_c - 1 downto LG_c), BW_c + 3) - resize(m0, BW_c + 3);
    end process p_setup;

    p_d0_reg : process (clk) is
        variable dx : dx_t;
    begin
        if rising_edge(clk) then
            if g_fetch2_reg = '1' then
                g_fetch2_reg <= '0';
            end if;
            if g_fetch_reg = '1' then
                g_fetch_reg <= '0';
                g_fetch2_reg <= '1';
                dx := dx_rd_data;
                gx_place_reg <= dx(DX_W_c - 1) and g_fen_reg and not herr_reg(ci(g_fconn_reg))
                                and not (herr_set and to_sl(herr_set_conn = g_fconn_reg));
                gx_dest_reg <= unsigned(dx(DX_W_c - 2 downto DX_W_c - 1 - ADDR_W));
                gx_remain_reg <= unsigned(dx(RECC_W_c + 224 + 15 downto RECC_W_c + 224));
                gx_rec_reg <= dx(RECC_W_c + 223 downto 224);
                gx_rr_reg <= dx(223 downto 0);
                gx_tag_reg <= dx(224 + REC_TAGGED_c);
                gx_gen_reg <= tg_rd_data;
                gx_su_reg <= pl_setup(unsigned(dx(DX_W_c - 1 - ADDR_W + LG_c - 1 downto DX_W_c - 1 - ADDR_W)),
                                      (others => '0'),
                                      unsigned(dx(RECC_W_c + 224 + 15 downto RECC_W_c + 224)));
            elsif dc_out_ready = '1' and g_first = '0' then
                g_fetch_reg <= '1';
                g_fconn_reg <= g_conn;
                g_fen_reg <= g_en;
            end if;
            if g_load = '1' then
                d0_valid_reg <= '1';
                d0_first_reg <= g_pfirst;
                d0_early_reg <= g_pearly;
                d0_en_reg <= g_pen;
                d0_place_q <= g_place;
                d0_cut_reg <= cut_reg(ci(g_conn));
                d0_cutf_reg <= cut_set and to_sl(cut_set_conn = g_conn);
                d0_conn_reg <= g_pconn;
                d0_dest_reg <= g_dest;
                d0_s_reg <= g_s;
                d0_remain_reg <= g_remain;
                d0_rec_reg <= g_rec;
                d0_rr_reg <= g_rr;
                d0_r_reg <= g_r;
                d0_win0_reg <= g_win0;
                d0_win1_reg <= g_win1;
                d0_q0_reg <= g_q0;
                d0_q1_reg <= g_q1;
                d0_lo_reg <= g_lo;
                d0_hi_reg <= g_hi;
                -- The first written output beat, m0, is at dest rounded down
                -- to N; output beat k at (dest / N - m0 + k) N. D1 counts the
                -- address from m0 on (wst), and its place in the burst block
                -- from 0.
                d0_waddr_reg <= g_dest and not to_unsigned(KEEP_W_c - 1, ADDR_W);
                d0_bofs_reg <= g_bofs(BW_c - 1 downto 0);
                d0_wst_reg <= to_sl(g_m0 = 0);
                d0_left_reg <= g_left;
            elsif d0_take = '1' then
                d0_valid_reg <= '0';
            end if;
            if rst = '1' then
                g_fetch_reg <= '0';
                g_fetch2_reg <= '0';
                d0_valid_reg <= '0';
            end if;
        end if;
    end process p_d0_reg;

    -- STag generations (ddp_rx_setup.v): the entry's count now against the
    -- ULPDU's at its first piece; the cut connection's bit.
    sg_rd_addr <= dx_rd_data(224 + REC_STAG_c + 8 + STAG_AW - 1 downto 224 + REC_STAG_c + 8) when g_fetch_reg = '1'
                  else g_drec(REC_STAG_c + 8 + STAG_AW - 1 downto REC_STAG_c + 8);
    g_cut <= gx_place_reg and gx_tag_reg and to_sl(sg_rd_data /= gx_gen_reg);
    d0_place_reg <= d0_place_q and not (d0_first_reg and (d0_cut_reg or d0_cutf_reg));

    p_gen_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if cf_stag = '1' then
                sg_gen_reg <= std_ulogic_vector(unsigned(sg_gen_reg) + 1);
            end if;
            tg_wr_reg <= (not g_fetch2_reg) and dc_out_ready and g_first and not g_early;
            tg_conn_reg <= g_conn;
            cut_set <= g_fetch2_reg and g_cut;
            cut_set_conn <= g_fconn_reg;
            if cut_set = '1' then
                cut_reg(ci(cut_set_conn)) <= '1';
            end if;
            if cf_conn = '1' then
                cut_reg(ci(s_conn_conn)) <= '0';
            end if;
            if rst = '1' then
                sg_gen_reg <= (others => '0');
                tg_wr_reg <= '0';
                cut_set <= '0';
                cut_reg <= (others => '0');
            end if;
        end if;
    end process p_gen_reg;

    -- D1: the piece being placed.
    d_cur_data <= df_out(DF_W_c - 1 downto DF_W_c - DATA_W);
    d_cur_keep <= df_out(KEEP_W_c + 1 downto 2);
    d_cur_tlast <= df_out(1);
    d_cur_ulast <= df_out(0);
    out_ok <= aw_in_ready and w_in_ready and bq_in_ready;

    -- Output beat: lanes at or above the rotation from the current beat,
    -- below it from the previous one, each rotated up by R lanes.
    p_ob : process (all) is
        variable flush : std_ulogic;
        variable rdc, rdp : data_t;
        variable rkc, rkp : keep_t;
        variable hi_lanes : keep_t;
        variable keep : keep_t;
        variable r : natural;
    begin
        flush := to_sl(d_state_reg /= D_DATA_c);
        r := to_integer(d_r_reg);
        rdc := std_ulogic_vector(rotate_left(unsigned(d_cur_data), 8 * r));
        rkc := std_ulogic_vector(rotate_left(unsigned(d_cur_keep), r));
        rdp := std_ulogic_vector(rotate_left(unsigned(d_prev_reg), 8 * r));
        rkp := std_ulogic_vector(rotate_left(unsigned(d_prevk_reg), r));
        for b in 0 to KEEP_W_c - 1 loop
            hi_lanes(b) := to_sl(b >= r);
        end loop;
        -- (A flush beat has no current input beat: its lanes are zero.)
        ob_data <= (rdc and expand(hi_lanes and (KEEP_W_c - 1 downto 0 => not flush)))
                   or (rdp and expand(not hi_lanes));
        if flush = '1' then
            keep := (rkp and not hi_lanes);
        else
            keep := (rkc and hi_lanes) or (rkp and not hi_lanes);
        end if;
        ob_strb <= keep and d_win_reg and (KEEP_W_c - 1 downto 0 => d_place_reg);
        -- The flush beat of the current input beat (the next output beat: its
        -- lanes below the rotation), for a piece's tlast beat.
        fl_data <= rdc and expand(not hi_lanes);
        fl_strb <= rkc and (not hi_lanes) and d_winn_reg and (KEEP_W_c - 1 downto 0 => d_place_reg);
    end process p_ob;

    -- Flags of the counts, from registers. A new burst (at an output beat
    -- with no burst open) runs to the end of its BURST block or to the end
    -- of the ULPDU's payload: nbm1 = min(left - 1, BURST - 1 - bofs) beats
    -- after its first. (left - 1 >= BURST - 1 - bofs, the wrapped left - 1
    -- of left = 0 included, is worked out on left's low BW + 1 bits: any
    -- higher bit set makes left >= 2 BURST.)
    f_left3 <= to_sl(d_left_reg = 3);
    f_left4 <= to_sl(d_left_reg = 4);
    f_bl3 <= to_sl(d_bleft_reg = 3);
    f_nb <= not d_bofs_reg;                                   -- BURST - 1 - bofs
    f_bend <= to_sl(d_bofs_reg = (BW_c - 1 downto 0 => '1'));  -- last beat of a block
    f_bend1 <= to_sl(d_bofs_reg = BEND1_c);
    f_llo <= d_left_reg(BW_c downto 0);
    f_llom1 <= d_left_reg(BW_c downto 0) - 1;
    f_lge <= to_sl(d_left_reg(17 downto BW_c + 1) /= 0 or f_llo = 0 or f_llom1 >= resize(f_nb, BW_c + 1));
    f_nbm1 <= resize(f_nb, 8) when f_lge = '1' else resize(f_llom1(BW_c - 1 downto 0), 8);
    f_nbm1_0 <= f_left1 or f_bend;
    f_nbm1_1 <= (f_left2 and not f_bend) or (f_bend1 and not f_left0 and not f_left1);
    f_nbm1_2 <= to_sl(f_nbm1 = 2);

    -- The counters' steps, from their registers alone, so that the control
    -- only picks them (the Verilog's rnic_incdec: here inc64, dec64,
    -- on the zero-extended counter, low bits taken).
    d_leftm1 <= resize(dec64(resize(d_left_reg, 64)), 18);
    d_leftm2h <= resize(dec64(resize(d_left_reg(17 downto 1), 64)), 17);
    d_leftm2 <= d_leftm2h & d_left_reg(0);
    d_k1 <= resize(inc64(resize(d_k_reg, 64)), 13);
    d_q0m1 <= resize(dec64(resize(d_q0_reg, 64)), 20);
    d_q1m1 <= resize(dec64(resize(d_q1_reg, 64)), 20);
    d_wan <= resize(inc64(resize(d_waddr_reg(ADDR_W - 1 downto LG_c), 64)), ADDR_W - LG_c);
    -- The next output beat's address: waddr + N from the window's first
    -- beat on (d_wst), before it the first beat's address.
    d_waddr_n <= d_wan & (LG_c - 1 downto 0 => '0') when d_wst_reg = '1' else d_waddr_reg;

    d0_take <= d0_valid_reg and ((not d1_active_reg) or d_end);
    -- A piece that D1 takes while idle whose first input beat writes
    -- nothing (its output beat is outside the write window: the payload's
    -- first output beat needs the next input beat too) takes that beat at
    -- the load (d_prime): D1 starts as it would be a clock later, after a
    -- beat that only fills d_prev. Not for a tlast beat, nor behind a piece
    -- still in D1 (its beat at df_out would be that piece's).
    d_prime <= d0_valid_reg and not d1_active_reg and df_out_valid and not d_cur_tlast
               and not (or d0_win0_reg);
    df_out_ready <= d_beat or d_prime;
    -- D1's step over that beat, from D0's registers.
    d0_q0m1 <= resize(dec64(resize(d0_q0_reg, 64)), 20);
    d0_q1m1 <= resize(dec64(resize(d0_q1_reg, 64)), 20);
    d0_wan <= resize(inc64(resize(d0_waddr_reg(ADDR_W - 1 downto LG_c), 64)), ADDR_W - LG_c);
    d0_win2 <= win_mask(d0_q0_reg, d0_q1_reg, d0_lo_reg, d0_hi_reg);

    w2_in_data <= fl_data & fl_strb & '1';
    w2_in_half <= d_waddr_n(LG_c);

    -- What a data or flush beat would do, from registers alone (the
    -- handshakes only AND it in): it writes (wrx; a pad beat never does),
    -- and then left is 0 (lft_n0x), bleft is 0 or 1 (bl_n0x, bl_n1x). A
    -- ULPDU's last input beat, when taken, ends the piece with nothing more
    -- to write (t_end1), with a flush beat behind its own in the same clock
    -- (t_w2), or with a flush beat alone (t_fl); otherwise a flush beat
    -- follows. (The Verilog keeps the three as nets of their own.)
    d_wrx <= d_place_reg and d_wne_reg;
    d_lft_n0x <= sel(d_wrx, f_left1, f_left0);
    d_bl_n0x <= sel(d_wrx, sel(f_bl0, f_nbm1_0, f_bl1), f_bl0);
    d_bl_n1x <= sel(d_wrx, sel(f_bl0, f_nbm1_1, f_bl2), f_bl1);
    d_t_end1 <= d_cur_ulast and ((not d_place_reg) or d_lft_n0x);
    d_t_w2 <= d_cur_ulast and (not d_t_end1) and d_wrx and w_in_ready2 and d_bl_n1x;
    d_t_w2b <= d_cur_ulast and (not d_t_end1) and d_wrx and w_in_ready2
               and (f_bl1 or (to_sl(WR_REQ /= 0) and f_bl0 and f_bend));
    d_t_fl <= d_cur_ulast and (not d_t_end1) and (not d_wrx) and f_bl0 and f_left1;

    p_d1 : process (all) is
        variable beat, wr, en, aw, go : std_ulogic;
        variable st_next : u2_t;
        variable octs : u17_t;
        variable kc : unsigned(LG_c downto 0);
        variable rrn : rr_t;
        variable awv, wv, w2v, wh : std_ulogic;
        variable awd : aww_t;
        variable wd : ww_t;
    begin
        st_next := d_state_reg;
        octs := d_octs_reg;
        rrn := d_rr_reg;
        awv := '0';
        awd := std_ulogic_vector(d_waddr_reg) & std_ulogic_vector(f_nbm1);
        wv := '0';
        wd := ob_data & ob_strb & sel(f_bl0, f_nbm1_0, f_bl1);
        wh := d_waddr_reg(LG_c);
        w2v := '0';
        en := '0';
        -- A piece's end waits for D2 (d2_free): the tlast beat, a flush beat
        -- and the last pad beat.
        case d_state_reg is
            when D_DATA_c =>
                go := d1_active_reg and out_ok and df_out_valid and ((not d_cur_tlast) or d2_free);
            when D_FLUSH_c =>
                go := d1_active_reg and out_ok and d2_free;
            when others =>
                go := d1_active_reg and out_ok and ((not f_bl1) or d2_free);
        end case;
        beat := go and to_sl(d_state_reg = D_DATA_c);
        wr := go and to_sl(d_state_reg /= D_PAD_c) and d_wrx;
        aw := wr and f_bl0;
        if wr = '1' then
            wv := '1';
            awv := aw;
        end if;
        if beat = '1' and d_first_reg = '1' then
            rrn := rr_capture(d_rr_reg, d_cur_data, d_k_reg);
        end if;
        if beat = '1' and d_cur_tlast = '1' then
            -- k N + the beat's octets, N of them or fewer (no carry chain)
            kc := keep_count(d_cur_keep);
            if kc(LG_c) = '1' then
                octs := shift_left(resize(d_k1, 17), LG_c);
            else
                octs := shift_left(resize(d_k_reg, 17), LG_c) or resize(kc(LG_c - 1 downto 0), 17);
            end if;
        end if;
        case d_state_reg is
            when D_DATA_c =>
                if beat = '1' and d_cur_tlast = '1' then
                    -- A flush beat follows when the last input beat leaves
                    -- octets of the payload for the next output beat (see the
                    -- Verilog): in this clock behind this beat's, alone as a
                    -- burst of one, or in state D_FLUSH.
                    if d_t_end1 = '1' then
                        en := '1';
                    elsif d_t_w2 = '1' then
                        w2v := '1';
                        en := '1';
                    elsif d_t_w2b = '1' then
                        -- this beat's burst ends at a BURST block's end: the
                        -- flush beat is a burst of one of its own
                        -- (with the write-request stream: a continuation of
                        -- this beat, without an AW; see the Verilog)
                        w2v := '1';
                        if WR_REQ = 0 then
                            awv := '1';
                            awd := std_ulogic_vector(d_waddr_n) & x"00";
                        end if;
                        en := '1';
                    elsif d_t_fl = '1' then
                        wv := '1';
                        wd := fl_data & fl_strb & '1';
                        wh := d_waddr_n(LG_c);
                        awv := '1';
                        awd := std_ulogic_vector(d_waddr_n) & x"00";
                        en := '1';
                    else
                        st_next := D_FLUSH_c;
                    end if;
                end if;
            when D_FLUSH_c =>
                if go = '1' then
                    if d_bl_n0x = '1' then
                        en := '1';
                    else
                        st_next := D_PAD_c;
                    end if;
                end if;
            when others =>
                -- The piece ended inside a burst: the rest of it, no strobes.
                if go = '1' then
                    wv := '1';
                    wd := (W_W_c - 1 downto 1 => '0') & f_bl1;
                    if f_bl1 = '1' then
                        en := '1';
                    end if;
                end if;
        end case;
        if en = '1' then
            st_next := D_DATA_c;
        end if;
        d_beat <= beat;
        d_wr <= wr;
        d_end <= en;
        d_aw <= aw;
        d_go <= go;
        d_state_next <= st_next;
        d_octs <= octs;
        d_rr_next <= rrn;
        aw_in_valid <= awv;
        aw_in_data <= awd;
        w_in_valid <= wv;
        w_in_data <= wd;
        w_in_half <= wh;
        w2_in_valid <= w2v;
        -- Output beats (W beats pushed, from the data path: not the pad beats).
        d_nw <= ("0" & wr) + ("0" & w2v) + ("0" & (not wr and wv and to_sl(d_state_reg = D_DATA_c)));
    end process p_d1;

    p_d1_reg : process (clk) is
        variable wm : keep_t;
    begin
        if rising_edge(clk) then
            if d0_take = '1' then
                d1_active_reg <= '1';
                d_state_reg <= D_DATA_c;
                d_conn_reg <= d0_conn_reg;
                d_first_reg <= d0_first_reg;
                d_early_reg <= d0_early_reg;
                d_en_reg <= d0_en_reg;
                d_place_reg <= d0_place_reg;
                d_dest_reg <= d0_dest_reg;
                d_s_reg <= d0_s_reg;
                d_remain_reg <= d0_remain_reg;
                d_rec_reg <= d0_rec_reg;
                d_r_reg <= d0_r_reg;
                d_lo_reg <= d0_lo_reg;
                d_hi_reg <= d0_hi_reg;
                if d_prime = '1' then
                    -- (as a D1 beat that writes nothing: see there)
                    if d0_first_reg = '1' then
                        d_rr_reg <= rr_capture(d0_rr_reg, d_cur_data, (others => '0'));
                    else
                        d_rr_reg <= d0_rr_reg;
                    end if;
                    d_win_reg <= d0_win1_reg;
                    d_winn_reg <= d0_win2;
                    d_wne_reg <= or d0_win1_reg;
                    d_wnen_reg <= or d0_win2;
                    d_q0_reg <= d0_q0m1;
                    d_q1_reg <= d0_q1m1;
                    if d0_wst_reg = '1' then
                        d_waddr_reg <= d0_wan & (LG_c - 1 downto 0 => '0');
                    else
                        d_waddr_reg <= d0_waddr_reg;
                    end if;
                    d_bofs_reg <= d0_bofs_reg + 1;
                    d_wst_reg <= d0_q0_reg(19);
                    d_k_reg <= to_unsigned(1, d_k_reg'length);
                    d_prev_reg <= d_cur_data;
                    d_prevk_reg <= d_cur_keep;
                else
                    d_rr_reg <= d0_rr_reg;
                    d_win_reg <= d0_win0_reg;
                    d_winn_reg <= d0_win1_reg;
                    d_wne_reg <= or d0_win0_reg;
                    d_wnen_reg <= or d0_win1_reg;
                    d_q0_reg <= d0_q0_reg;
                    d_q1_reg <= d0_q1_reg;
                    d_waddr_reg <= d0_waddr_reg;
                    d_bofs_reg <= d0_bofs_reg;
                    d_wst_reg <= d0_wst_reg;
                    d_k_reg <= (others => '0');
                    d_prev_reg <= (others => '0');
                    d_prevk_reg <= (others => '0');
                end if;
                d_left_reg <= d0_left_reg;
                f_left0 <= to_sl(d0_left_reg = 0);
                f_left1 <= to_sl(d0_left_reg = 1);
                f_left2 <= to_sl(d0_left_reg = 2);
                d_bleft_reg <= (others => '0');
                f_bl0 <= '1';
                f_bl1 <= '0';
                f_bl2 <= '0';
            else
                if d_end = '1' then
                    d1_active_reg <= '0';
                end if;
                d_state_reg <= d_state_next;
                d_rr_reg <= d_rr_next;
                if d_go = '1' then
                    if d_state_reg = D_PAD_c or (d_wr = '1' and d_aw = '0') then
                        d_bleft_reg <= d_bleft_reg - 1;
                        f_bl0 <= f_bl1;
                        f_bl1 <= f_bl2;
                        f_bl2 <= f_bl3;
                    elsif d_wr = '1' then
                        d_bleft_reg <= f_nbm1(BW_c - 1 downto 0);
                        f_bl0 <= f_nbm1_0;
                        f_bl1 <= f_nbm1_1;
                        f_bl2 <= f_nbm1_2;
                    end if;
                end if;
                -- left - d_nw: both differences worked out from the register,
                -- one picked by d_nw.
                if d_nw = 1 then
                    d_left_reg <= d_leftm1;
                    f_left0 <= f_left1;
                    f_left1 <= f_left2;
                    f_left2 <= f_left3;
                elsif d_nw = 2 then
                    d_left_reg <= d_leftm2;
                    f_left0 <= f_left2;
                    f_left1 <= f_left3;
                    f_left2 <= f_left4;
                end if;
                if d_beat = '1' then
                    d_prev_reg <= d_cur_data;
                    d_prevk_reg <= d_cur_keep;
                    d_k_reg <= d_k1;
                    d_waddr_reg <= d_waddr_n;
                    d_wst_reg <= d_q0_reg(19);
                    d_bofs_reg <= d_bofs_reg + 1;
                    d_win_reg <= d_winn_reg;
                    d_wne_reg <= d_wnen_reg;
                    wm := win_mask(d_q0_reg, d_q1_reg, d_lo_reg, d_hi_reg);
                    d_winn_reg <= wm;
                    d_wnen_reg <= or wm;
                    d_q0_reg <= d_q0m1;
                    d_q1_reg <= d_q1m1;
                end if;
            end if;
            if d_beat = '1' and d_cur_tlast = '1' then
                d_last_reg <= d_cur_ulast;
                d_octs_reg <= d_octs;
            end if;
            if rst = '1' then
                d1_active_reg <= '0';
                d_state_reg <= D_DATA_c;
                d_bleft_reg <= (others => '0');
                f_bl0 <= '1';
                f_bl1 <= '0';
                f_bl2 <= '0';
            end if;
        end if;
    end process p_d1_reg;

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
            if d_end = '1' then
                d2_valid_reg <= '1';
                if d_state_reg = D_DATA_c then
                    e2_last_reg <= d_cur_ulast;
                else
                    e2_last_reg <= d_last_reg;
                end if;
                e2_en_reg <= d_en_reg;
                e2_early_reg <= d_early_reg;
                e2_place_reg <= d_place_reg;
                e2_conn_reg <= d_conn_reg;
                e2_dest_reg <= d_dest_reg;
                e2_s_reg <= d_s_reg;
                e2_octs_reg <= d_octs;
                e2_remain_reg <= d_remain_reg;
                e2_rec_reg <= d_rec_reg;
                e2_rr_reg <= d_rr_next;
            elsif d2_done = '1' then
                d2_valid_reg <= '0';
            end if;
            if rst = '1' then
                d2_valid_reg <= '0';
            end if;
        end if;
    end process p_e2_reg;

    -- --- configuration (when the pipeline is empty) ----------------------------------

    all_idle <= (not i_inpiece_reg) and (not hf_out_valid) and (not c1_valid_reg) and (not b_valid_reg)
                and (not c2_valid_reg) and (not dc_out_valid) and pl_empty and (not df_out_valid)
                and not cf_post_reg;

    -- The fence (s_stag, s_conn; see the Verilog, ddp_rx_tables.v): also
    -- every write placed so far taken by the port and answered; and not
    -- while the tables are cleared after reset.
    wq_busy <= aw_out_valid or w_out_valid;
    fence_idle <= all_idle and (not wq_busy) and not bq_out_valid;
    conn_ready <= fence_idle and (not rs_busy) and not clr_busy_reg;
    stag_ready <= fence_idle and (not clr_busy_reg) and not s_conn_valid;
    post_ready <= all_idle and (not clr_busy_reg) and (not s_conn_valid) and not s_stag_valid;
    s_conn_ready <= conn_ready;
    s_stag_ready <= stag_ready;
    s_post_ready <= post_ready;

    cf_conn <= s_conn_valid and conn_ready;
    cf_stag <= s_stag_valid and stag_ready;
    cf_post <= s_post_valid and post_ready;

    -- After reset: every context, placement context and STag entry cleared,
    -- one of each a clock, the ready outputs low meanwhile (ddp_rx_tables.v).
    p_clr_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if clr_busy_reg = '1' then
                clr_addr_reg <= clr_addr_reg + 1;
                if clr_addr_reg = to_unsigned(2 ** CLR_AW_c - 1, CLR_AW_c) then
                    clr_busy_reg <= '0';
                end if;
            end if;
            if rst = '1' then
                clr_busy_reg <= '1';
                clr_addr_reg <= (others => '0');
            end if;
        end if;
    end process p_clr_reg;

    p_cf_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if cf_post = '1' then
                o_conn_reg <= s_post_conn;
                o_qn_reg <= unsigned(s_post_qn);
                o_ent_reg <= s_post_addr & s_post_len & s_post_id;
            end if;
            cf_post_reg <= cf_post;
            if rst = '1' then
                cf_post_reg <= '0';
            end if;
        end if;
    end process p_cf_reg;

    p_o : process (all) is
        variable cx : cx_t;
        variable q : q_t;
        variable first : u32_t;
        variable cnt : qcnt_t;
        variable nq : q_t;
    begin
        cx := cx_rd_data;
        q := cx_q(cx(3 * Q_W_c - 1 downto 0), std_ulogic_vector(o_qn_reg));
        first := unsigned(q(Q_W_c - 1 downto RQ_AW + 1));
        cnt := unsigned(q(RQ_AW downto 0));
        o_first <= first;
        o_cnt <= cnt;
        o_ok <= cx(CX_W_c - 1) and to_sl(o_qn_reg /= 3) and to_sl(cnt /= QFULL_c);
        nq := std_ulogic_vector(first) & std_ulogic_vector(cnt + 1);
        case o_qn_reg is
            when "01" => cx(2 * Q_W_c - 1 downto Q_W_c) := nq;
            when "10" => cx(3 * Q_W_c - 1 downto 2 * Q_W_c) := nq;
            when others => cx(Q_W_c - 1 downto 0) := nq;
        end case;
        o_cx <= cx;
    end process p_o;

    -- Table ports: the pipeline's, or configuration's while it is empty.
    p_tables : process (all) is
    begin
        cx_rd_en <= h_valid and c_adv;
        cx_rd_addr <= hf_conn;
        st_rd_en <= h_valid and c_adv;
        st_rd_addr <= std_ulogic_vector(hf_idx32(8 + STAG_AW - 1 downto 8));
        rg_rd_en <= h_valid and c_adv;
        rg_rd_addr <= hf_conn & hf_hdr(8 * 9 + 1 downto 8 * 9) & hf_hdr(8 * 13 + RQ_AW - 1 downto 8 * 13);
        cx_wr_en <= c2_decide;
        cx_wr_addr <= c2_conn_reg;
        cx_wr_data <= r_cx;
        st_wr_en <= c2_decide and r_inval;
        st_wr_addr <= k_idx;
        st_wr_data <= '0' & e_st_reg;
        rg_wr_en <= '0';
        rg_wr_addr <= o_conn_reg & std_ulogic_vector(o_qn_reg)
                      & std_ulogic_vector(o_first(RQ_AW - 1 downto 0) + o_cnt(RQ_AW - 1 downto 0));
        rg_wr_data <= o_ent_reg;
        dx_wr_en <= d4_valid_reg;
        dx_wr_addr <= e4_conn_reg;
        dx_wr_data <= e4_place_reg & std_ulogic_vector(e4_nxt) & std_ulogic_vector(e4_left) & e4_rec_reg & e4_rr_reg;
        rf_in_valid <= d2_valid_reg and e2_last_reg and not e2_early_reg;
        rf_in_data <= e2_en_reg & std_ulogic_vector(aw_cnt_reg) & e2_conn_reg & e2_rec_reg & e2_rr_reg;
        if cf_conn = '1' then
            -- (Re)start a connection (RFC 5041 4.3: every queue at MSN 1).
            cx_wr_en <= '1';
            cx_wr_addr <= s_conn_conn;
            cx_wr_data <= s_conn_enable & s_conn_pd & '0' & Q_INIT_c & Q_INIT_c & Q_INIT_c;
            dx_wr_en <= '1';
            dx_wr_addr <= s_conn_conn;
            dx_wr_data <= (others => '0');
        elsif cf_stag = '1' then
            st_wr_en <= '1';
            st_wr_addr <= s_stag_index;
            st_wr_data <= s_stag_entry_valid & s_stag_key & s_stag_pd & s_stag_bound & s_stag_conn
                          & s_stag_access & s_stag_base & s_stag_len & s_stag_addr;
        elsif cf_post = '1' then
            cx_rd_en <= '1';
            cx_rd_addr <= s_post_conn;
        end if;
        if cf_post_reg = '1' and o_ok = '1' then
            -- The buffer takes the MSN after the last posted one (4.3).
            rg_wr_en <= '1';
            cx_wr_en <= '1';
            cx_wr_addr <= o_conn_reg;
            cx_wr_data <= o_cx;
        end if;
        if clr_busy_reg = '1' then
            -- The clear after reset (nothing else moves meanwhile).
            cx_wr_en <= '1';
            cx_wr_addr <= std_ulogic_vector(clr_addr_reg(CONN_W - 1 downto 0));
            cx_wr_data <= '0' & x"00000000" & '0' & Q_INIT_c & Q_INIT_c & Q_INIT_c;
            dx_wr_en <= '1';
            dx_wr_addr <= std_ulogic_vector(clr_addr_reg(CONN_W - 1 downto 0));
            dx_wr_data <= (others => '0');
            st_wr_en <= '1';
            st_wr_addr <= std_ulogic_vector(clr_addr_reg(STAG_AW - 1 downto 0));
            st_wr_data <= (others => '0');
        end if;
    end process p_tables;

    -- --- delivery: records and verdicts, in the order of last pieces -----------------

    -- V0: the oldest undelivered record, taken from rec_fifo's head, with
    -- its connection's dead and herr bits looked up as it comes in (a clock
    -- of its own). The bits it holds then follow every change: the dead
    -- bits the deliveries set, the herr bits the B responses set and what
    -- s_conn clears, each registered (dl_*, hs_*, cc_*) and applied a clock
    -- after it is made, in the clock's order (a clear last); the lookup
    -- misses only the changes of the clock it is made in, which come in the
    -- same way.
    rf_en <= v0_data_reg(RF_W_c - 1);
    rf_mark <= unsigned(v0_data_reg(RF_W_c - 2 downto RF_W_c - 1 - MK_W_c));
    rf_conn <= v0_data_reg(RF_W_c - MK_W_c - 2 downto RF_W_c - MK_W_c - 1 - CONN_W);
    rf_rec <= v0_data_reg(224 + RECC_W_c - 1 downto 224);
    rf_kind <= unsigned(rf_rec(RECC_W_c - 1 downto RECC_W_c - 2));
    rh_conn <= rf_out_data(RF_W_c - MK_W_c - 2 downto RF_W_c - MK_W_c - 1 - CONN_W);
    rh_mark <= unsigned(rf_out_data(RF_W_c - 2 downto RF_W_c - 1 - MK_W_c));
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
                ev_rr_reg <= v0_data_reg(223 downto 0);
                if dv_bad = '1' then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= LAYER_LLP & ETYPE_MPA & "00000" & s_verdict_tdata;
                elsif v0_herr = '1' then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= ERR_RDMAP_LOCAL_CATASTROPHIC;
                elsif rf_kind = K_ERR_c then
                    err_valid_reg <= not v0_cstale;
                    ev_err_reg <= rf_rec(15 downto 0);
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

    -- --- status pulses ---------------------------------------------------------------

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
            if cx_rd_data(CX_W_c - 1) = '0' then
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
    m_cpl_opcode <= ev_rec_reg(ID_W + 150 downto ID_W + 147);
    m_cpl_tagged <= ev_rec_reg(ID_W + 146);
    m_cpl_qn <= ev_rec_reg(ID_W + 145 downto ID_W + 144);
    m_cpl_msn <= ev_rec_reg(ID_W + 143 downto ID_W + 112);
    m_cpl_len <= ev_rec_reg(ID_W + 111 downto ID_W + 80);
    m_cpl_id <= ev_rec_reg(ID_W + 79 downto 80);
    m_cpl_stag <= ev_rec_reg(79 downto 48);
    m_cpl_inv_stag <= ev_rec_reg(47 downto 16);
    m_cpl_rr <= ev_rr_reg;
    m_err_valid <= err_valid_reg;
    m_err_conn <= ev_conn_reg;
    m_err_layer <= ev_err_reg(15 downto 12);
    m_err_etype <= ev_err_reg(11 downto 8);
    m_err_code <= ev_err_reg(7 downto 0);

end architecture rtl;
