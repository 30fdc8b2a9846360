-- mpa_rx: the MPA receiver (RFC 5044 Full Operation, in-order case) for
-- many connections, DATA_W bits per clock. TCP segment payloads in; the
-- ULPDUs (DDP segments) found in them out, cut through, markers,
-- ULPDU_Length, pad and CRC removed; a verdict for every FPDU once its CRC
-- field has been checked; every segment it does not take in order out on
-- the exception stream, whole, with a reason.
--
--   s_axis -> mpa_rx_align -> skid -> mpa_rx_walk -+-> mpa_rx_lane 0 -+-> merge -> m_axis, m_verdict
--                  |                               +-> mpa_rx_lane 1 -+
--                  +-> m_exc
--
-- VHDL-2008 twin of hw/rtl/mpa_rx.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_rx/test_mpa_rx.py drives both
-- (the Verilog header has the interface in full; hw/README.md the interface
-- to DDP placement). In brief:
--
-- Configuration, cfg_*: starts connection cfg_conn at sequence number
-- cfg_base (the first octet of Full Operation; markers every 512 octets
-- from there), markers and CRCs on or off as negotiated (RFC 5044 7.1),
-- and clears its error; cfg_en = '0' stops it. Accepted between segments.
-- Input s_axis: one frame per TCP segment, lane-0 aligned, ceil(len/N)
-- beats; tuser = conn & seq(31 downto 0) & len(15 downto 0).
-- Output m_axis: ULPDU pieces, tuser = ulpdu_len(15 downto 0) & conn &
-- first & last. m_verdict: tdata = code (0 good, 2 CRC, 3 marker or
-- ULPDU_Length; MPA errors, RFC 5044 8), tuser = conn, one per FPDU in FPDU
-- order, each after its ULPDU's last piece; after a non-zero verdict the
-- connection's segments go to the exception stream; fail_* marks a
-- connection in error alike (the QP failed: the model's segIn), through a
-- one-entry holding register written into the error table on a clock
-- without a verdict's write. m_exc: the segments
-- not taken, tuser = conn & seq & len & reason(2 downto 0) (1 not enabled,
-- 2 in error, 3 out of order, 4 duplicate, 5 empty).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_rx is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk              : in  std_logic := '0';
        rst              : in  std_logic := '0';

        cfg_valid        : in  std_logic := '0';
        cfg_ready        : out std_logic := '0';
        cfg_conn         : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_en           : in  std_logic := '0';
        cfg_mrk_en       : in  std_logic := '0';
        cfg_crc_en       : in  std_logic := '0';
        cfg_base         : in  std_logic_vector(31 downto 0) := (others => '0');

        fail_valid       : in  std_logic := '0';
        fail_ready       : out std_logic := '0';
        fail_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        s_axis_tdata     : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep     : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid    : in  std_logic := '0';
        s_axis_tready    : out std_logic := '0';
        s_axis_tlast     : in  std_logic := '0';
        s_axis_tuser     : in  std_logic_vector(CONN_W + 47 downto 0) := (others => '0');

        m_axis_tdata     : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_axis_tkeep     : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_axis_tvalid    : out std_logic := '0';
        m_axis_tready    : in  std_logic := '0';
        m_axis_tlast     : out std_logic := '0';
        m_axis_tuser     : out std_logic_vector(CONN_W + 17 downto 0) := (others => '0');

        m_verdict_tdata  : out std_logic_vector(2 downto 0) := (others => '0');
        m_verdict_tvalid : out std_logic := '0';
        m_verdict_tready : in  std_logic := '0';
        m_verdict_tuser  : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        m_exc_tdata      : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_exc_tkeep      : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_exc_tvalid     : out std_logic := '0';
        m_exc_tready     : in  std_logic := '0';
        m_exc_tlast      : out std_logic := '0';
        m_exc_tuser      : out std_logic_vector(CONN_W + 50 downto 0) := (others => '0')
    );
end entity mpa_rx;

architecture rtl of mpa_rx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_rx: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c  : positive := DATA_W / 8;
    constant WL_c : positive := clog2(DATA_W / 32) + 1;
    constant OL_c : positive := clog2(N_c) + 1;

    subtype u8_t is unsigned(7 downto 0);

    -- --- configuration goes to both tables at once ---

    signal a_cfg_ready, w_cfg_ready : std_logic := '0';
    signal cfg_ready_i, cfg_go : std_ulogic := '0';

    signal err_set_reg  : std_ulogic := '0';
    signal err_conn_reg : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    -- fail_*'s holding register: into the error table when no verdict writes it
    signal fail_hold_reg : std_ulogic := '0';
    signal fail_conn_reg : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal err_wr : std_ulogic := '0';
    signal err_wr_conn : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');

    -- --- intake ---

    signal a_data : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
    signal a_valid, a_ready, a_first, a_last, a_mk, a_mrk_en, a_crc_en, a_hint, a_cont : std_logic := '0';
    signal a_hint_conn : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal a_conn : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal a_wlo, a_whi : std_logic_vector(WL_c - 1 downto 0) := (others => '0');
    signal w_mk : std_ulogic := '0';
    -- the skid buffer between the intake and the walker
    signal k_valid, k_first, k_cont, k_last, k_mk, k_crc_en : std_logic := '0';
    signal k_data : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
    signal k_conn : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal k_wlo, k_whi : std_logic_vector(WL_c - 1 downto 0) := (others => '0');
    signal b_valid, b_ready, b_first, b_cont, b_last, b_mk, b_crc_en : std_logic := '0';
    signal b_data : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
    signal b_conn : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal b_wlo, b_whi : std_logic_vector(WL_c - 1 downto 0) := (others => '0');

    -- --- delineation ---

    signal l_valid, l_ready : std_logic_vector(1 downto 0) := (others => '0');
    signal l_data : std_logic_vector(2 * DATA_W - 1 downto 0) := (others => '0');
    signal l_crc_lo, l_crc_hi : std_logic_vector(2 * WL_c - 1 downto 0) := (others => '0');
    signal l_crcw : std_logic_vector(2 * WL_c - 3 downto 0) := (others => '0');
    signal l_ulp_lo, l_ulp_hi : std_logic_vector(2 * OL_c - 1 downto 0) := (others => '0');
    signal l_run_first, l_run_last, l_resume, l_nopiece, l_fpdu_first, l_fpdu_end,
           l_crc_en, l_mkbad, l_lenbad : std_logic_vector(1 downto 0) := (others => '0');
    signal l_state : std_logic_vector(63 downto 0) := (others => '0');
    signal l_conn : std_logic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
    signal l_ulen : std_logic_vector(31 downto 0) := (others => '0');
    signal l_vseq : std_logic_vector(15 downto 0) := (others => '0');
    signal wb_valid : std_logic_vector(1 downto 0) := (others => '0');
    signal wb_conn : std_logic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
    signal wb_state : std_logic_vector(63 downto 0) := (others => '0');
    -- The lanes' saved CRCs, queued for the walker's one port.
    signal wq0_v, wq1_v : std_ulogic := '0';
    signal wq0_conn, wq1_conn : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal wq0_state, wq1_state : std_ulogic_vector(31 downto 0) := (others => '0');
    signal wb_any : std_ulogic := '0';
    signal wb_first_conn : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal wb_first_state : std_ulogic_vector(31 downto 0) := (others => '0');

    -- --- two lanes ---

    signal p_tdata : std_logic_vector(2 * DATA_W - 1 downto 0) := (others => '0');
    signal p_tkeep : std_logic_vector(2 * N_c - 1 downto 0) := (others => '0');
    signal p_tvalid, p_tready, p_tlast, p_first, p_last : std_logic_vector(1 downto 0) := (others => '0');
    signal p_conn : std_logic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
    signal p_ulen : std_logic_vector(31 downto 0) := (others => '0');
    signal v_valid, v_ready : std_logic_vector(1 downto 0) := (others => '0');
    signal v_conn : std_logic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
    signal v_code : std_logic_vector(5 downto 0) := (others => '0');
    signal v_vseq : std_logic_vector(15 downto 0) := (others => '0');

    -- --- merge ---

    -- the lane of each run that makes a piece, in run order (see the Verilog)
    signal l_held_reg   : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_new        : std_ulogic_vector(1 downto 0) := (others => '0');
    signal ord_two, ord_in_valid : std_ulogic := '0';
    signal ord_in_lane, ord_in_lane2, ord_lane, ord_valid, ord_pop : std_ulogic_vector(0 downto 0) := (others => '0');
    signal vexp_reg     : u8_t := (others => '0');     -- FPDU-end number of the next verdict
    signal vdone_reg    : u8_t := (others => '0');     -- FPDU ends whose last piece has gone out

    signal sel, piece_go : std_ulogic := '0';
    signal sel_tvalid, sel_plast, m_tvalid_i, m_tlast_i : std_ulogic := '0';   -- sel_*: the selected lane's
    signal vok, vh0, vsel, verdict_go : std_ulogic := '0';
    signal m_vvalid_i : std_ulogic := '0';
    signal m_vdata_i : std_ulogic_vector(2 downto 0) := (others => '0');
    signal m_vuser_i : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');

begin

    -- --- configuration goes to both tables at once ---------------------------------------

    cfg_ready_i <= a_cfg_ready and w_cfg_ready;
    cfg_ready <= cfg_ready_i;
    cfg_go <= cfg_valid and cfg_ready_i;

    fail_ready <= not fail_hold_reg;
    err_wr <= err_set_reg or fail_hold_reg;
    err_wr_conn <= err_conn_reg when err_set_reg = '1' else fail_conn_reg;

    p_fail : process (clk) is
    begin
        if rising_edge(clk) then
            if fail_valid = '1' and fail_hold_reg = '0' then
                fail_hold_reg <= '1';
                fail_conn_reg <= fail_conn;
            elsif err_set_reg = '0' then
                fail_hold_reg <= '0';
            end if;
            if rst = '1' then
                fail_hold_reg <= '0';
            end if;
        end if;
    end process p_fail;

    -- --- intake ---------------------------------------------------------------------------

    align : entity work.mpa_rx_align
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            cfg_valid => cfg_go, cfg_ready => a_cfg_ready, cfg_conn => cfg_conn, cfg_en => cfg_en,
            cfg_mrk_en => cfg_mrk_en, cfg_crc_en => cfg_crc_en, cfg_base => cfg_base,
            err_valid => err_wr, err_conn => err_wr_conn,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep, s_axis_tvalid => s_axis_tvalid,
            s_axis_tready => s_axis_tready, s_axis_tlast => s_axis_tlast, s_axis_tuser => s_axis_tuser,
            m_data => a_data, m_valid => a_valid, m_ready => a_ready, m_conn => a_conn,
            m_first => a_first, m_cont => a_cont, m_last => a_last, m_wlo => a_wlo, m_whi => a_whi, m_mk => a_mk,
            m_mrk_en => a_mrk_en, m_crc_en => a_crc_en, m_hint => a_hint, m_hint_conn => a_hint_conn,
            m_exc_tdata => m_exc_tdata, m_exc_tkeep => m_exc_tkeep, m_exc_tvalid => m_exc_tvalid,
            m_exc_tready => m_exc_tready, m_exc_tlast => m_exc_tlast, m_exc_tuser => m_exc_tuser
        );

    -- --- between the intake and the walker: a one-beat skid buffer -------------------
    -- The walker's ready depends on its pass, too deep to drive the
    -- intake's pipeline in the same clock. The intake sees a register
    -- instead (k_valid low): a beat goes straight through to the walker and
    -- waits in k_* when the walker does not take it; while one waits
    -- there, the intake holds its next one.

    w_mk <= a_mk and a_mrk_en;
    a_ready <= not k_valid;
    b_valid <= k_valid or a_valid;
    b_data <= k_data when k_valid = '1' else a_data;
    b_conn <= k_conn when k_valid = '1' else a_conn;
    b_first <= k_first when k_valid = '1' else a_first;
    b_cont <= k_cont when k_valid = '1' else a_cont;
    b_last <= k_last when k_valid = '1' else a_last;
    b_mk <= k_mk when k_valid = '1' else w_mk;
    b_crc_en <= k_crc_en when k_valid = '1' else a_crc_en;
    b_wlo <= k_wlo when k_valid = '1' else a_wlo;
    b_whi <= k_whi when k_valid = '1' else a_whi;

    p_skid : process (clk) is
    begin
        if rising_edge(clk) then
            if k_valid = '0' then
                k_data <= a_data;
                k_conn <= a_conn;
                k_first <= a_first;
                k_cont <= a_cont;
                k_last <= a_last;
                k_mk <= w_mk;
                k_crc_en <= a_crc_en;
                k_wlo <= a_wlo;
                k_whi <= a_whi;
            end if;
            k_valid <= b_valid and not b_ready;
            if rst = '1' then
                k_valid <= '0';
            end if;
        end if;
    end process p_skid;

    -- --- delineation ------------------------------------------------------------------------

    -- The lanes' saved CRCs share the walker's one port through a
    -- two-entry queue, one a clock, from registers. The walker has at most
    -- two cut runs' CRCs on their way back (mpa_rx_walk's pend_v), so both
    -- lanes may return one in the same clock, and the queue never holds a
    -- third.
    wb_any <= wb_valid(0) or wb_valid(1);
    wb_first_conn <= wb_conn(CONN_W - 1 downto 0) when wb_valid(0) = '1' else wb_conn(2 * CONN_W - 1 downto CONN_W);
    wb_first_state <= wb_state(31 downto 0) when wb_valid(0) = '1' else wb_state(63 downto 32);

    p_wq : process (clk) is
    begin
        if rising_edge(clk) then
            -- The head goes to the walker every clock; what is behind it
            -- moves up and the lanes' new ones go in behind that.
            if wq1_v = '1' then
                wq0_v <= '1';
                wq0_conn <= wq1_conn;
                wq0_state <= wq1_state;
                wq1_v <= wb_any;
                wq1_conn <= wb_first_conn;
                wq1_state <= wb_first_state;
            else
                wq0_v <= wb_any;
                wq0_conn <= wb_first_conn;
                wq0_state <= wb_first_state;
                wq1_v <= wb_valid(0) and wb_valid(1);
                wq1_conn <= wb_conn(2 * CONN_W - 1 downto CONN_W);
                wq1_state <= wb_state(63 downto 32);
            end if;
            if rst = '1' then
                wq0_v <= '0';
                wq1_v <= '0';
            end if;
        end if;
    end process p_wq;

    walk : entity work.mpa_rx_walk
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            cfg_valid => cfg_go, cfg_ready => w_cfg_ready, cfg_conn => cfg_conn,
            s_data => b_data, s_valid => b_valid, s_ready => b_ready, s_conn => b_conn,
            s_first => b_first, s_cont => b_cont, s_last => b_last, s_wlo => b_wlo, s_whi => b_whi, s_mk => b_mk,
            s_crc_en => b_crc_en, s_hint => a_hint, s_hint_conn => a_hint_conn,
            wb_valid => wq0_v, wb_conn => wq0_conn, wb_state => wq0_state,
            l_valid => l_valid, l_ready => l_ready, l_data => l_data,
            l_crc_lo => l_crc_lo, l_crc_hi => l_crc_hi, l_crcw => l_crcw,
            l_ulp_lo => l_ulp_lo, l_ulp_hi => l_ulp_hi,
            l_run_first => l_run_first, l_run_last => l_run_last, l_resume => l_resume,
            l_nopiece => l_nopiece, l_state => l_state,
            l_fpdu_first => l_fpdu_first, l_fpdu_end => l_fpdu_end, l_conn => l_conn, l_ulen => l_ulen,
            l_crc_en => l_crc_en, l_mkbad => l_mkbad, l_lenbad => l_lenbad, l_vseq => l_vseq
        );

    -- --- two lanes --------------------------------------------------------------------------

    lane : for g in 0 to 1 generate
        u : entity work.mpa_rx_lane
            generic map (DATA_W => DATA_W, CONN_W => CONN_W)
            port map (
                clk => clk, rst => rst,
                s_valid => l_valid(g), s_ready => l_ready(g),
                s_data => l_data(DATA_W * g + DATA_W - 1 downto DATA_W * g),
                s_crc_lo => l_crc_lo(WL_c * g + WL_c - 1 downto WL_c * g),
                s_crc_hi => l_crc_hi(WL_c * g + WL_c - 1 downto WL_c * g),
                s_crcw => l_crcw((WL_c - 1) * g + WL_c - 2 downto (WL_c - 1) * g),
                s_ulp_lo => l_ulp_lo(OL_c * g + OL_c - 1 downto OL_c * g),
                s_ulp_hi => l_ulp_hi(OL_c * g + OL_c - 1 downto OL_c * g),
                s_run_first => l_run_first(g), s_run_last => l_run_last(g), s_resume => l_resume(g),
                s_nopiece => l_nopiece(g),
                s_state => l_state(32 * g + 31 downto 32 * g), s_fpdu_first => l_fpdu_first(g),
                s_fpdu_end => l_fpdu_end(g), s_conn => l_conn(CONN_W * g + CONN_W - 1 downto CONN_W * g),
                s_ulen => l_ulen(16 * g + 15 downto 16 * g),
                s_crc_en => l_crc_en(g), s_mkbad => l_mkbad(g), s_lenbad => l_lenbad(g),
                s_vseq => l_vseq(8 * g + 7 downto 8 * g),
                m_tdata => p_tdata(DATA_W * g + DATA_W - 1 downto DATA_W * g),
                m_tkeep => p_tkeep(N_c * g + N_c - 1 downto N_c * g),
                m_tvalid => p_tvalid(g), m_tready => p_tready(g), m_tlast => p_tlast(g),
                m_conn => p_conn(CONN_W * g + CONN_W - 1 downto CONN_W * g),
                m_ulen => p_ulen(16 * g + 15 downto 16 * g),
                m_first => p_first(g), m_last => p_last(g),
                v_valid => v_valid(g), v_ready => v_ready(g),
                v_conn => v_conn(CONN_W * g + CONN_W - 1 downto CONN_W * g),
                v_code => v_code(3 * g + 2 downto 3 * g), v_vseq => v_vseq(8 * g + 7 downto 8 * g),
                wb_valid => wb_valid(g), wb_conn => wb_conn(CONN_W * g + CONN_W - 1 downto CONN_W * g),
                wb_state => wb_state(32 * g + 31 downto 32 * g)
            );
    end generate lane;

    -- --- merge: pieces in run order, verdicts in FPDU order --------------------------------------

    -- The lane of each run that makes a piece, pushed as the walker hands
    -- its first beat to the lane (run A's before run B's, which is an
    -- FPDU's first), popped as its piece's last beat goes out: the lane
    -- picked is the queue's head, a register.
    l_new <= l_valid and not l_held_reg and l_run_first and not l_nopiece;
    ord_two <= l_new(0) and l_new(1);
    ord_in_valid <= l_new(0) or l_new(1);
    ord_in_lane(0) <= not l_fpdu_first(1) when ord_two = '1' else l_new(1);
    ord_in_lane2(0) <= not ord_in_lane(0);

    ord_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => 1, AW => 5)
        port map (
            clk => clk, rst => rst,
            in_data => ord_in_lane, in_valid => ord_in_valid, in_ready => open,
            in_data2 => ord_in_lane2, in_valid2 => ord_two, in_ready2 => open,
            out_data => ord_lane, out_valid => ord_valid(0), out_ready => ord_pop(0)
        );

    sel <= ord_lane(0);

    m_axis_tdata <= p_tdata(2 * DATA_W - 1 downto DATA_W) when sel = '1' else p_tdata(DATA_W - 1 downto 0);
    m_axis_tkeep <= p_tkeep(2 * N_c - 1 downto N_c) when sel = '1' else p_tkeep(N_c - 1 downto 0);
    m_tlast_i <= p_tlast(1) when sel = '1' else p_tlast(0);
    m_axis_tlast <= m_tlast_i;
    m_axis_tuser <= p_ulen(31 downto 16) & p_conn(2 * CONN_W - 1 downto CONN_W) & p_first(1) & p_last(1)
                    when sel = '1' else
                    p_ulen(15 downto 0) & p_conn(CONN_W - 1 downto 0) & p_first(0) & p_last(0);
    sel_tvalid <= p_tvalid(1) when sel = '1' else p_tvalid(0);
    sel_plast <= p_last(1) when sel = '1' else p_last(0);
    m_tvalid_i <= ord_valid(0) and sel_tvalid;
    m_axis_tvalid <= m_tvalid_i;
    p_tready(0) <= ord_valid(0) and not sel and m_axis_tready;
    p_tready(1) <= ord_valid(0) and sel and m_axis_tready;
    piece_go <= m_tvalid_i and m_axis_tready;
    ord_pop(0) <= piece_go and m_tlast_i;

    -- vexp_reg never passes vdone_reg, and they are at most the lanes'
    -- runs in flight apart: "some FPDU ahead is done" is an inequality.
    vok <= to_sl(vdone_reg /= vexp_reg);
    vh0 <= v_valid(0) and to_sl(unsigned(v_vseq(7 downto 0)) = vexp_reg);
    vsel <= not vh0;
    m_vvalid_i <= vok and (vh0 or (v_valid(1) and to_sl(unsigned(v_vseq(15 downto 8)) = vexp_reg)));
    m_vdata_i <= v_code(5 downto 3) when vsel = '1' else v_code(2 downto 0);
    m_vuser_i <= v_conn(2 * CONN_W - 1 downto CONN_W) when vsel = '1' else v_conn(CONN_W - 1 downto 0);
    m_verdict_tvalid <= m_vvalid_i;
    m_verdict_tdata <= m_vdata_i;
    m_verdict_tuser <= m_vuser_i;
    v_ready(0) <= m_vvalid_i and not vsel and m_verdict_tready;
    v_ready(1) <= m_vvalid_i and vsel and m_verdict_tready;
    verdict_go <= m_vvalid_i and m_verdict_tready;

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            err_set_reg <= verdict_go and (or m_vdata_i);
            err_conn_reg <= m_vuser_i;
            l_held_reg <= l_valid and not l_ready;
            if ord_pop(0) = '1' and sel_plast = '1' then
                vdone_reg <= vdone_reg + 1;
            end if;
            if verdict_go = '1' then
                vexp_reg <= vexp_reg + 1;
            end if;
            if rst = '1' then
                err_set_reg <= '0';
                l_held_reg <= (others => '0');
                vexp_reg <= (others => '0');
                vdone_reg <= (others => '0');
            end if;
        end if;
    end process p_reg;

end architecture rtl;
