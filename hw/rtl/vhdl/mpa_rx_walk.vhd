-- mpa_rx_walk: the FPDU delineator of the MPA receive path (mpa_rx). Walks
-- the stream-aligned words that mpa_rx_align hands on, finds every FPDU by
-- the ULPDU_Length of the one before (RFC 5044 6, in-order case), checks
-- every marker's FPDUPTR and every ULPDU_Length, and cuts the words into
-- runs: a run is the part of one FPDU that one segment carries (or
-- consecutive segments of a connection walked as one), the unit of one CRC
-- computation and of one ULPDU piece. Runs alternate between two
-- lanes (mpa_rx_lane), so that a beat holding the end of one FPDU and the
-- start of the next feeds both at once.
--
-- VHDL-2008 twin of hw/rtl/mpa_rx_walk.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_rx/test_mpa_rx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- A marker, when a beat has one, is word 0 and belongs to the FPDU of the
-- word after it: the open FPDU (its FPDUPTR must be the distance from that
-- FPDU's ULPDU_Length field) or, when a ULPDU_Length field follows it, the
-- new FPDU (FPDUPTR 0, RFC 5044 4.3). The CRC covers everything of an FPDU
-- but its CRC word (4.4), markers included. FPDUPTR's low two bits and the
-- marker's RESERVED half are ignored, as in iwarp/mpa's Receiver.
--
-- Per-connection state (sdp_ram, read as a segment's first beat enters the
-- precompute stage or ahead on s_hint, written after its last; a later
-- write to the same connection is kept beside the word read, the patch): S(15 downto 0) & since(15 downto 0) & pad &
-- mkbad & lenbad & lead; and, written by the lanes (wb_*), the running CRC
-- of the open FPDU when a segment ended inside it. Until that CRC is back
-- (about ten clocks) no segment starts, unless the next segment is of the
-- same connection and right behind (s_cont): the walk then goes on into it
-- (see "segments of one connection back to back").
--
-- Lane outputs, one beat of the run each (lane i in the i-th slice): data;
-- crc_lo/crc_hi (the words the CRC covers); crcw (the word holding the
-- received CRC, fpdu_end only); ulp_lo/ulp_hi (the ULPDU octets);
-- run_first, run_last, resume, nopiece, state, fpdu_first, fpdu_end, conn,
-- ulen, crc_en, mkbad, lenbad; vseq (the FPDU end's number), in walker
-- order, for mpa_rx to merge the lanes' verdicts.
--
-- A segment's state loads as its first beat enters the precompute stage
-- when its words were read at an earlier edge and the walk is idle or ends
-- the segment before then (without cutting an FPDU, when that is of the
-- same connection); otherwise a clock later in W_IDLE.
--
-- Throughput: one beat a clock while each beat starts at most one FPDU; a
-- beat that starts k FPDUs takes k clocks. Latency: 2 clocks (precompute
-- and lookup, then the state loads) before the walk.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_rx_walk is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk          : in  std_logic := '0';
        rst          : in  std_logic := '0';

        -- configuration: a connection starts at an FPDU boundary
        cfg_valid    : in  std_logic := '0';
        cfg_ready    : out std_logic := '0';
        cfg_conn     : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        -- stream-aligned words from mpa_rx_align
        s_data       : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_valid      : in  std_logic := '0';
        s_ready      : out std_logic := '0';
        s_conn       : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_first      : in  std_logic := '0';
        s_cont       : in  std_logic := '0';     -- (first beats) mpa_rx_align's m_cont
        s_last       : in  std_logic := '0';
        s_wlo        : in  std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        s_whi        : in  std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        s_mk         : in  std_logic := '0';
        s_crc_en     : in  std_logic := '0';
        -- the connection of the segment to come (mpa_rx_align's m_hint)
        s_hint       : in  std_logic := '0';
        s_hint_conn  : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        -- running CRC of a run that a segment end cut, from the lanes
        wb_valid     : in  std_logic := '0';
        wb_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        wb_state     : in  std_logic_vector(31 downto 0) := (others => '0');

        -- two lanes
        l_valid      : out std_logic_vector(1 downto 0) := (others => '0');
        l_ready      : in  std_logic_vector(1 downto 0) := (others => '0');
        l_data       : out std_logic_vector(2 * DATA_W - 1 downto 0) := (others => '0');
        l_crc_lo     : out std_logic_vector(2 * (clog2(DATA_W / 32) + 1) - 1 downto 0) := (others => '0');
        l_crc_hi     : out std_logic_vector(2 * (clog2(DATA_W / 32) + 1) - 1 downto 0) := (others => '0');
        l_crcw       : out std_logic_vector(2 * clog2(DATA_W / 32) - 1 downto 0) := (others => '0');
        l_ulp_lo     : out std_logic_vector(2 * (clog2(DATA_W / 8) + 1) - 1 downto 0) := (others => '0');
        l_ulp_hi     : out std_logic_vector(2 * (clog2(DATA_W / 8) + 1) - 1 downto 0) := (others => '0');
        l_run_first  : out std_logic_vector(1 downto 0) := (others => '0');
        l_run_last   : out std_logic_vector(1 downto 0) := (others => '0');
        l_resume     : out std_logic_vector(1 downto 0) := (others => '0');
        l_nopiece    : out std_logic_vector(1 downto 0) := (others => '0');
        l_state      : out std_logic_vector(63 downto 0) := (others => '0');
        l_fpdu_first : out std_logic_vector(1 downto 0) := (others => '0');
        l_fpdu_end   : out std_logic_vector(1 downto 0) := (others => '0');
        l_conn       : out std_logic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
        l_ulen       : out std_logic_vector(31 downto 0) := (others => '0');
        l_crc_en     : out std_logic_vector(1 downto 0) := (others => '0');
        l_mkbad      : out std_logic_vector(1 downto 0) := (others => '0');
        l_lenbad     : out std_logic_vector(1 downto 0) := (others => '0');
        l_vseq       : out std_logic_vector(15 downto 0) := (others => '0')
    );
end entity mpa_rx_walk;

architecture rtl of mpa_rx_walk is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_rx_walk: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c     : positive := DATA_W / 8;
    constant LN_c    : positive := clog2(N_c);
    constant WORDS_c : positive := DATA_W / 32;
    constant WL_c    : positive := clog2(WORDS_c) + 1;     -- a word position 0 .. WORDS
    constant OL_c    : positive := LN_c + 1;               -- an octet position 0 .. N
    constant ST_W_c  : positive := 16 + 16 + 2 + 1 + 1 + 1;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype st_t is std_ulogic_vector(ST_W_c - 1 downto 0);
    subtype w_t is unsigned(WL_c - 1 downto 0);
    subtype o_t is unsigned(OL_c - 1 downto 0);
    subtype u8_t is unsigned(7 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype state_t is std_ulogic_vector(1 downto 0);
    type u15_arr_t is array (0 to WORDS_c - 1) of unsigned(14 downto 0);
    type u19_arr_t is array (0 to WORDS_c - 1) of unsigned(18 downto 0);
    type u2_arr_t is array (0 to WORDS_c - 1) of unsigned(1 downto 0);
    type u16_arr_t is array (0 to WORDS_c - 1) of u16_t;

    constant MAX_ULPDU_c : u16_t := to_unsigned(64768, 16);

    constant W_IDLE_c : state_t := "00";
    constant W_RUN_c  : state_t := "10";

    -- 0 or 1, to add a flag to a count.
    function as_u(b : std_ulogic) return natural is
    begin
        if b = '1' then
            return 1;
        end if;
        return 0;
    end function as_u;

    -- --- precompute stage: per word, what it would mean as a ULPDU_Length ---

    signal p_valid  : std_ulogic := '0';
    signal p_data   : data_t := (others => '0');
    signal p_conn   : conn_t := (others => '0');
    signal p_first  : std_ulogic := '0';
    signal p_last   : std_ulogic := '0';
    signal p_mk     : std_ulogic := '0';
    signal p_crc_en : std_ulogic := '0';
    signal p_wlo    : w_t := (others => '0');
    signal p_whi    : w_t := (others => '0');
    signal p_t      : u15_arr_t := (others => (others => '0'));  -- content words from here through the CRC word
    signal p_uend   : u19_arr_t := (others => (others => '0'));  -- octet position (from this beat) past the ULPDU
    signal p_lenbad : std_ulogic_vector(WORDS_c - 1 downto 0) := (others => '0');
    signal p_pad    : u2_arr_t := (others => (others => '0'));
    signal p_len    : u16_arr_t := (others => (others => '0'));   -- the word's first two octets as a ULPDU_Length
    -- Where an FPDU whose ULPDU_Length is word j ends (see the Verilog): it
    -- ends in the beat, another starts behind it in the beat, the word after
    -- its CRC.
    signal p_e, p_m : std_ulogic_vector(WORDS_c - 1 downto 0) := (others => '0');
    type w_arr_t is array (0 to WORDS_c - 1) of w_t;
    signal p_a      : w_arr_t := (others => (others => '0'));

    signal p_take, p_free : std_ulogic := '0';
    signal merge_now, nxt_same, cont, cut : std_ulogic := '0';
    signal p_full : std_ulogic := '0';          -- p_whi = WORDS: the beat ends on a beat boundary

    -- --- per-connection tables ---

    signal wstate_reg  : state_t := W_IDLE_c;
    -- Cut runs' CRCs on their way back (two at most): slot valid, and
    -- their connections.
    signal pend_v : std_ulogic_vector(1 downto 0) := "00";
    signal pend_c0, pend_c1 : conn_t := (others => '0');
    signal pend_any, p_blocked : std_ulogic := '0';
    signal mrg_en_reg : std_ulogic := '1';      -- the latest segment end left an FPDU open

    signal look, rd_en, idle_ok, lk_hit, load_in, load_run, load : std_ulogic := '0';
    signal rd_addr    : conn_t := (others => '0');
    signal lk_valid   : std_ulogic := '0';
    signal lk_conn    : conn_t := (others => '0');  -- whose words st_rd and crc_rd (and the patch) hold
    signal st_pv, crc_pv : std_ulogic := '0';
    signal st_patch   : st_t := (others => '0');
    signal crc_patch  : std_ulogic_vector(31 downto 0) := (others => '0');
    signal st_pt, crc_pt, sel_s : std_ulogic := '0';
    signal st_now     : st_t := (others => '0');
    signal crc_now    : std_ulogic_vector(31 downto 0) := (others => '0');
    signal st_rd      : std_logic_vector(ST_W_c - 1 downto 0) := (others => '0');
    signal crc_rd     : std_logic_vector(31 downto 0) := (others => '0');
    signal st_wr_en   : std_ulogic := '0';
    signal st_wr_addr : conn_t := (others => '0');
    signal st_wr_data : st_t := (others => '0');

    -- --- the walk ---

    signal s_reg          : u16_t := (others => '0');     -- content words from pos to the next ULPDU_Length
    signal since_reg      : u16_t := (others => '0');     -- words from the open FPDU's ULPDU_Length to this beat
    signal pad_reg        : unsigned(1 downto 0) := (others => '0');
    signal mkbad_reg      : std_ulogic := '0';
    signal lenbad_reg     : std_ulogic := '0';
    signal lead_reg       : std_ulogic := '0';            -- the next FPDU's leading marker is in state_reg
    signal run_open_reg   : std_ulogic := '0';            -- the open FPDU has a run in this segment
    signal gl_reg         : std_ulogic := '0';            -- lane of the latest run
    signal pos_reg        : w_t := (others => '0');       -- next word of the beat (passes after the first)
    signal first_pass_reg : std_ulogic := '0';
    signal state_reg      : std_ulogic_vector(31 downto 0) := (others => '0');  -- running CRC of the open FPDU
    signal vseq_reg       : u8_t := (others => '0');

    -- lane outputs
    signal l_valid_reg      : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_data_reg       : std_ulogic_vector(2 * DATA_W - 1 downto 0) := (others => '0');
    signal l_crc_lo_reg     : std_ulogic_vector(2 * WL_c - 1 downto 0) := (others => '0');
    signal l_crc_hi_reg     : std_ulogic_vector(2 * WL_c - 1 downto 0) := (others => '0');
    signal l_crcw_reg       : std_ulogic_vector(2 * (WL_c - 1) - 1 downto 0) := (others => '0');
    signal l_ulp_lo_reg     : std_ulogic_vector(2 * OL_c - 1 downto 0) := (others => '0');
    signal l_ulp_hi_reg     : std_ulogic_vector(2 * OL_c - 1 downto 0) := (others => '0');
    signal l_run_first_reg  : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_run_last_reg   : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_resume_reg     : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_nopiece_reg    : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_state_reg      : std_ulogic_vector(63 downto 0) := (others => '0');
    signal l_fpdu_first_reg : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_fpdu_end_reg   : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_conn_reg       : std_ulogic_vector(2 * CONN_W - 1 downto 0) := (others => '0');
    signal l_ulen_reg       : std_ulogic_vector(31 downto 0) := (others => '0');
    signal l_crc_en_reg     : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_mkbad_reg      : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_lenbad_reg     : std_ulogic_vector(1 downto 0) := (others => '0');
    signal l_vseq_reg       : std_ulogic_vector(15 downto 0) := (others => '0');

    signal out_free, step : std_ulogic := '0';
    signal mk_here   : std_ulogic := '0';
    signal pos       : w_t := (others => '0');
    signal avail     : w_t := (others => '0');
    signal a_present, a_cont, a_end : std_ulogic := '0';
    signal h         : w_t := (others => '0');             -- next ULPDU_Length word
    signal b_present : std_ulogic := '0';
    signal m_only    : std_ulogic := '0';
    signal hi        : unsigned(WL_c - 2 downto 0) := (others => '0');
    signal t_h       : unsigned(14 downto 0) := (others => '0');
    signal room      : w_t := (others => '0');
    signal b_end     : std_ulogic := '0';
    signal after_b   : w_t := (others => '0');
    signal more      : std_ulogic := '0';

    signal mk_words  : unsigned(13 downto 0) := (others => '0');
    signal mk_bad_open, mk_bad_new, a_mkbad, b_mkbad : std_ulogic := '0';

    signal a_new, la, lb : std_ulogic := '0';

    signal a_crc_lo, a_crcw, a_crc_hi : w_t := (others => '0');
    signal a_ulp_lo, a_ulp_hi : o_t := (others => '0');
    signal a_uleft, a_uend : unsigned(17 downto 0) := (others => '0');

    signal b_lead : std_ulogic := '0';
    signal b_crc_lo, b_crcw, b_crc_hi : w_t := (others => '0');
    signal b_ulp_lo, b_ulp_hi : o_t := (others => '0');
    signal b_uend : unsigned(18 downto 0) := (others => '0');
    signal b_lenbad : std_ulogic := '0';
    signal b_pad : unsigned(1 downto 0) := (others => '0');

    signal done, open_after, seg_end, cfg_fire : std_ulogic := '0';
    signal s_next, since_next : u16_t := (others => '0');

begin

    -- --- precompute stage ---------------------------------------------------------

    p_free <= (not p_valid) or p_take;
    -- A segment's last beat not yet walked takes in the first beat of the
    -- next segment of its connection when that shares its stream beat (see
    -- "segments of one connection back to back" below).
    s_ready <= p_free or merge_now;

    -- --- per-connection tables -------------------------------------------------------

    look <= p_free and s_valid and s_first;          -- its first beat enters
    -- The tables are read for a first beat on s_* (every clock it waits
    -- there, so that its words are read when it enters), else for a hint;
    -- not while a first beat waits in W_IDLE for the words it read.
    rd_en <= (sel_s or s_hint) and not (to_sl(wstate_reg = W_IDLE_c) and p_valid and p_first);
    sel_s <= s_valid and s_first;
    rd_addr <= s_conn when sel_s = '1' else s_hint_conn;
    -- The lookahead start waits until no cut run's CRC is on its way back;
    -- the start in W_IDLE until none of its own connection is and at most
    -- one of another's.
    pend_any <= pend_v(0) or pend_v(1);
    p_blocked <= (pend_v(0) and to_sl(pend_c0 = p_conn)) or (pend_v(1) and to_sl(pend_c1 = p_conn))
                 or (pend_v(0) and pend_v(1));
    idle_ok <= to_sl(wstate_reg = W_IDLE_c) and not p_blocked and not cfg_valid;
    lk_hit <= look and lk_valid and to_sl(lk_conn = s_conn) and not pend_any and not cfg_valid;
    load_in <= lk_hit and to_sl(wstate_reg = W_IDLE_c);
    load_run <= lk_hit and step and seg_end and (not open_after or to_sl(lk_conn /= p_conn));
    load <= idle_ok and p_valid and p_first;

    st_ram : entity work.sdp_ram
        generic map (WIDTH => ST_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => st_wr_en, wr_addr => st_wr_addr, wr_data => st_wr_data,
            rd_en => rd_en, rd_addr => rd_addr, rd_data => st_rd
        );

    crc_ram : entity work.sdp_ram
        generic map (WIDTH => 32, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => wb_valid, wr_addr => wb_conn, wr_data => wb_state,
            rd_en => rd_en, rd_addr => rd_addr, rd_data => crc_rd
        );

    -- The patch: the newest write to the looked-up connection since its read.
    -- (Compared with every candidate, then chosen.)
    st_pt <= to_sl(st_wr_addr = lk_conn) when rd_en = '0' else
             to_sl(st_wr_addr = s_conn) when sel_s = '1' else to_sl(st_wr_addr = s_hint_conn);
    crc_pt <= to_sl(wb_conn = lk_conn) when rd_en = '0' else
              to_sl(wb_conn = s_conn) when sel_s = '1' else to_sl(wb_conn = s_hint_conn);

    p_patch : process (clk) is
    begin
        if rising_edge(clk) then
            if rd_en = '1' then
                st_pv <= '0';
                crc_pv <= '0';
                lk_conn <= rd_addr;
                lk_valid <= '1';
            end if;
            if rst = '1' then
                lk_valid <= '0';
            end if;
            if st_wr_en = '1' and st_pt = '1' then
                st_pv <= '1';
                st_patch <= st_wr_data;
            end if;
            if wb_valid = '1' and crc_pt = '1' then
                crc_pv <= '1';
                crc_patch <= wb_state;
            end if;
        end if;
    end process p_patch;

    st_now <= st_patch when st_pv = '1' else st_t(st_rd);
    crc_now <= crc_patch when crc_pv = '1' else std_ulogic_vector(crc_rd);

    cfg_ready <= to_sl(wstate_reg = W_IDLE_c);

    -- --- the walk ---------------------------------------------------------------------

    l_valid <= l_valid_reg;
    l_data <= l_data_reg;
    l_crc_lo <= l_crc_lo_reg;
    l_crc_hi <= l_crc_hi_reg;
    l_crcw <= l_crcw_reg;
    l_ulp_lo <= l_ulp_lo_reg;
    l_ulp_hi <= l_ulp_hi_reg;
    l_run_first <= l_run_first_reg;
    l_run_last <= l_run_last_reg;
    l_resume <= l_resume_reg;
    l_nopiece <= l_nopiece_reg;
    l_state <= l_state_reg;
    l_fpdu_first <= l_fpdu_first_reg;
    l_fpdu_end <= l_fpdu_end_reg;
    l_conn <= l_conn_reg;
    l_ulen <= l_ulen_reg;
    l_crc_en <= l_crc_en_reg;
    l_mkbad <= l_mkbad_reg;
    l_lenbad <= l_lenbad_reg;
    l_vseq <= l_vseq_reg;

    out_free <= ((not l_valid_reg(0)) or l_ready(0)) and ((not l_valid_reg(1)) or l_ready(1));
    step <= to_sl(wstate_reg = W_RUN_c) and p_valid and out_free and not merge_now;

    -- Segments of one connection back to back. mpa_rx_align passes only a
    -- segment that continues its connection's stream where the one before
    -- ended, so when the next segment's first beat is at s_* as a
    -- segment's last is walked and both are of one connection, the walk
    -- goes on into it: nothing is saved, no run is cut, and no running CRC
    -- has to come back through the table before the next segment starts.
    -- When the two share a stream beat (the segment ends inside a beat),
    -- the last beat first takes the next one's words in (merge_now, a
    -- clock in which it is not walked: crc32c takes null octets only at a
    -- run's start and end, so a run never has a beat with words missing in
    -- front); when the segment ends on a beat boundary, its last beat is
    -- walked as it is (cont).
    -- (From registers alone: s_cont says the beat at s_* continues the
    -- last one mpa_rx_align handed on, the one in p_*.)
    nxt_same <= s_valid and s_first and s_cont;
    -- Merging costs a clock in which nothing is walked, and when FPDUs end
    -- where segments do (FPDU Alignment, RFC 5044 section 2) a lane then
    -- waits on it for nothing; so a merge is tried only after a segment
    -- end that left an FPDU open (mrg_en_reg), the sign of a stream whose
    -- FPDUs cross segments.
    merge_now <= mrg_en_reg and p_valid and p_last and nxt_same and not p_full
                 and ((first_pass_reg and to_sl(wstate_reg = W_RUN_c))
                      or (p_first and to_sl(wstate_reg /= W_RUN_c)));

    -- Where this pass starts: past the marker, on the beat's first pass.
    mk_here <= first_pass_reg and p_mk;
    pos <= p_wlo + as_u(p_mk) when first_pass_reg = '1' else pos_reg;
    avail <= p_whi - pos;
    a_present <= or s_reg;
    a_cont <= a_present and to_sl(s_reg > resize(avail, 16));
    a_end <= a_present and not a_cont;
    h <= pos + s_reg(WL_c - 1 downto 0);
    b_present <= (not a_cont) and to_sl(h < p_whi);
    -- A segment that ends right after a marker in front of an FPDU: the
    -- marker is the FPDU's first word (RFC 5044 4.3) and goes into its CRC
    -- now, in a run of its own that makes no ULPDU piece; the FPDU's run in
    -- the next segment resumes from that CRC.
    m_only <= mk_here and (not a_present) and to_sl(p_whi = 1);
    hi <= h(WL_c - 2 downto 0);
    t_h <= p_t(to_integer(hi));
    room <= p_whi - h;
    b_end <= b_present and p_e(to_integer(hi));
    after_b <= p_a(to_integer(hi));
    more <= b_end and p_m(to_integer(hi));

    -- The marker: whose is it, and does it point where it must? FPDUPTR is
    -- octets 2 and 3 of the marker, big-endian; its low two bits are
    -- ignored, so the words in it are octet 2 & octet 3(7 downto 2).
    mk_words <= unsigned(p_data(23 downto 16)) & unsigned(p_data(31 downto 26));
    mk_bad_open <= to_sl(mk_words /= since_reg(13 downto 0)) or (or since_reg(15 downto 14));
    mk_bad_new <= or mk_words;
    a_mkbad <= mkbad_reg or (mk_here and mk_bad_open);
    b_mkbad <= (mk_here and (not a_present) and mk_bad_new) or (lead_reg and mkbad_reg);

    -- Lanes: a run that starts takes the lane after the latest one.
    a_new <= not run_open_reg;
    la <= not gl_reg when a_new = '1' else gl_reg;
    lb <= not la when a_present = '1' else not gl_reg;

    -- Run A: the open FPDU, from pos (its marker included on a first pass).
    a_crc_lo <= p_wlo when first_pass_reg = '1' else pos_reg;
    a_crcw <= h - 1;
    a_crc_hi <= a_crcw when a_end = '1' else p_whi;
    a_ulp_lo <= pos & "00";
    -- ULPDU octets left in the open FPDU: 4 (S - 1) - pad.
    a_uleft <= ((s_reg - 1) & "00") - resize(pad_reg, 18);
    a_uend <= resize(pos & "00", 18) + a_uleft;
    a_ulp_hi <= a_ulp_lo when s_reg <= 1 else
                p_whi & "00" when a_uend >= resize(p_whi & "00", 18) else
                a_uend(OL_c - 1 downto 0);

    -- Run B: the FPDU whose ULPDU_Length is at h.
    b_lead <= mk_here and not a_present;       -- its marker is word 0
    b_crc_lo <= p_wlo when b_lead = '1' else h;
    b_crcw <= after_b - 1;
    b_crc_hi <= b_crcw when b_end = '1' else p_whi;
    b_ulp_lo <= h & "10";
    b_uend <= p_uend(to_integer(hi));
    b_ulp_hi <= p_whi & "00" when b_uend >= resize(p_whi & "00", 19) else b_uend(OL_c - 1 downto 0);
    b_lenbad <= p_lenbad(to_integer(hi));
    b_pad <= p_pad(to_integer(hi));

    -- After the pass.
    done <= not more;
    open_after <= a_cont or (b_present and not b_end) or m_only;
    s_next <= s_reg - resize(avail, 16) when a_cont = '1' else
              resize(t_h, 16) - resize(room, 16) when b_present = '1' and b_end = '0' else
              (others => '0');
    since_next <= since_reg + resize(p_whi - p_wlo, 16) when a_cont = '1' else resize(room, 16);
    cont <= p_last and nxt_same and p_full;
    seg_end <= done and p_last and not cont;
    cut <= p_last and not cont;                     -- the segment's end ends its runs

    p_take <= (step and done) or (to_sl(wstate_reg = W_IDLE_c) and p_valid and not p_first);

    -- Writes: a segment's end saves the walk; cfg starts a connection
    -- afresh (never both: cfg_ready is high only in W_IDLE).
    cfg_fire <= cfg_valid and to_sl(wstate_reg = W_IDLE_c);
    st_wr_en <= cfg_fire or (step and seg_end);
    st_wr_addr <= cfg_conn when cfg_fire = '1' else p_conn;
    p_st_wr_data : process (all) is
        variable d : st_t;
    begin
        if open_after = '1' then
            d(36 downto 21) := std_ulogic_vector(s_next);
        else
            d(36 downto 21) := (others => '0');
        end if;
        d(20 downto 5) := std_ulogic_vector(since_next);
        if a_cont = '1' then
            d(4 downto 3) := std_ulogic_vector(pad_reg);
            d(2) := a_mkbad;
            d(1) := lenbad_reg;
        else
            d(4 downto 3) := std_ulogic_vector(b_pad);
            d(2) := b_mkbad;
            d(1) := b_lenbad;
        end if;
        d(0) := m_only;
        if cfg_fire = '1' then
            d := (others => '0');
        end if;
        st_wr_data <= d;
    end process p_st_wr_data;

    -- --- registers -----------------------------------------------------------------------

    p_reg : process (clk) is
        variable len : u16_t;
        variable keep : boolean;
        variable lim_e, lim_m : integer;
        variable t_small : natural;
        variable la_i, lb_i : boolean;
        variable ld : st_t;
    begin
        if rising_edge(clk) then
            -- precompute stage (a merge keeps the words of the beat in p_*
            -- below its whi, and works out only whether each one's FPDU ends
            -- in the merged beat, against the new whi)
            if merge_now = '1' or (p_free = '1' and s_valid = '1') then
                for g in 0 to WORDS_c - 1 loop
                    keep := merge_now = '1' and g < to_integer(p_whi);
                    if keep then
                        len := p_len(g);
                    else
                        len := unsigned(s_data(32 * g + 7 downto 32 * g)) & unsigned(s_data(32 * g + 15 downto 32 * g + 8));
                    end if;
                    lim_e := 4 * to_integer(unsigned(s_whi)) - 4 * g - 6;
                    lim_m := lim_e - 4;
                    p_e(g) <= to_sl(len(15 downto 6) = 0 and to_integer(len(5 downto 0)) <= lim_e);
                    p_m(g) <= to_sl(len(15 downto 6) = 0 and to_integer(len(5 downto 0)) <= lim_m);
                    if not keep then
                        -- Content words from the ULPDU_Length word through the
                        -- CRC word: (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
                        if len(1 downto 0) = "11" then
                            p_t(g) <= ('0' & len(15 downto 2)) + 3;
                        else
                            p_t(g) <= ('0' & len(15 downto 2)) + 2;
                        end if;
                        p_uend(g) <= to_unsigned(4 * g + 2, 19) + resize(len, 19);
                        p_lenbad(g) <= to_sl(len > MAX_ULPDU_c);
                        p_pad(g) <= 2 - len(1 downto 0);
                        p_len(g) <= len;
                        t_small := (to_integer(len(5 downto 0)) + 9) / 4;
                        p_a(g) <= to_unsigned((g + t_small) mod 2 ** WL_c, WL_c);
                    end if;
                end loop;
            end if;
            if p_take = '1' then
                p_valid <= '0';
            end if;
            if merge_now = '1' then
                for g in 0 to WORDS_c - 1 loop
                    if g >= to_integer(p_whi) then
                        p_data(32 * g + 31 downto 32 * g) <= s_data(32 * g + 31 downto 32 * g);
                    end if;
                end loop;
                p_last <= s_last;
                p_whi <= unsigned(s_whi);
                p_full <= to_sl(unsigned(s_whi) = WORDS_c);
            elsif p_free = '1' and s_valid = '1' then
                p_valid <= '1';
                p_data <= s_data;
                p_conn <= s_conn;
                p_first <= s_first;
                p_last <= s_last;
                p_mk <= s_mk and (nor s_wlo);
                p_crc_en <= s_crc_en;
                p_wlo <= unsigned(s_wlo);
                p_whi <= unsigned(s_whi);
                p_full <= to_sl(unsigned(s_whi) = WORDS_c);
            end if;

            -- the walk
            for i in 0 to 1 loop
                if l_ready(i) = '1' then
                    l_valid_reg(i) <= '0';
                end if;
            end loop;
            if wb_valid = '1' then
                if pend_v(0) = '1' and pend_c0 = wb_conn then
                    pend_v(0) <= '0';
                elsif pend_v(1) = '1' and pend_c1 = wb_conn then
                    pend_v(1) <= '0';
                end if;
            end if;

            case wstate_reg is
                when W_IDLE_c =>
                    if load = '1' or load_in = '1' then
                        s_reg <= unsigned(st_now(36 downto 21));
                        since_reg <= unsigned(st_now(20 downto 5));
                        pad_reg <= unsigned(st_now(4 downto 3));
                        mkbad_reg <= st_now(2);
                        lenbad_reg <= st_now(1);
                        lead_reg <= st_now(0);
                        state_reg <= crc_now;
                        run_open_reg <= '0';
                        first_pass_reg <= '1';
                        wstate_reg <= W_RUN_c;
                    end if;
                when W_RUN_c =>
                    if step = '1' then
                        for i in 0 to 1 loop
                            la_i := (la = '1') = (i = 1);
                            lb_i := (lb = '1') = (i = 1);
                            -- Run A to lane la.
                            if a_present = '1' and la_i then
                                l_valid_reg(i) <= '1';
                                l_data_reg(DATA_W * i + DATA_W - 1 downto DATA_W * i) <= p_data;
                                l_crc_lo_reg(WL_c * i + WL_c - 1 downto WL_c * i) <= std_ulogic_vector(a_crc_lo);
                                l_crc_hi_reg(WL_c * i + WL_c - 1 downto WL_c * i) <= std_ulogic_vector(a_crc_hi);
                                l_crcw_reg((WL_c - 1) * i + WL_c - 2 downto (WL_c - 1) * i) <=
                                    std_ulogic_vector(a_crcw(WL_c - 2 downto 0));
                                l_ulp_lo_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= std_ulogic_vector(a_ulp_lo);
                                l_ulp_hi_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= std_ulogic_vector(a_ulp_hi);
                                l_run_first_reg(i) <= a_new;
                                l_run_last_reg(i) <= a_end or cut;
                                l_resume_reg(i) <= a_new;
                                l_state_reg(32 * i + 31 downto 32 * i) <= state_reg;
                                l_nopiece_reg(i) <= '0';
                                l_fpdu_first_reg(i) <= '0';
                                l_ulen_reg(16 * i + 15 downto 16 * i) <= (others => '0');
                                l_fpdu_end_reg(i) <= a_end;
                                l_conn_reg(CONN_W * i + CONN_W - 1 downto CONN_W * i) <= p_conn;
                                l_crc_en_reg(i) <= p_crc_en;
                                l_mkbad_reg(i) <= a_mkbad;
                                l_lenbad_reg(i) <= lenbad_reg;
                                l_vseq_reg(8 * i + 7 downto 8 * i) <= std_ulogic_vector(vseq_reg);
                            end if;
                            -- Run B to lane lb.
                            if b_present = '1' and lb_i then
                                l_valid_reg(i) <= '1';
                                l_data_reg(DATA_W * i + DATA_W - 1 downto DATA_W * i) <= p_data;
                                l_crc_lo_reg(WL_c * i + WL_c - 1 downto WL_c * i) <= std_ulogic_vector(b_crc_lo);
                                l_crc_hi_reg(WL_c * i + WL_c - 1 downto WL_c * i) <= std_ulogic_vector(b_crc_hi);
                                l_crcw_reg((WL_c - 1) * i + WL_c - 2 downto (WL_c - 1) * i) <=
                                    std_ulogic_vector(b_crcw(WL_c - 2 downto 0));
                                l_ulp_lo_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= std_ulogic_vector(b_ulp_lo);
                                l_ulp_hi_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= std_ulogic_vector(b_ulp_hi);
                                l_run_first_reg(i) <= '1';
                                l_run_last_reg(i) <= b_end or cut;
                                l_resume_reg(i) <= lead_reg;
                                l_state_reg(32 * i + 31 downto 32 * i) <= state_reg;
                                l_nopiece_reg(i) <= '0';
                                l_fpdu_first_reg(i) <= '1';
                                l_ulen_reg(16 * i + 15 downto 16 * i) <= std_ulogic_vector(p_len(to_integer(hi)));
                                l_fpdu_end_reg(i) <= b_end;
                                l_conn_reg(CONN_W * i + CONN_W - 1 downto CONN_W * i) <= p_conn;
                                l_crc_en_reg(i) <= p_crc_en;
                                l_mkbad_reg(i) <= b_mkbad;
                                l_lenbad_reg(i) <= b_lenbad;
                                if a_end = '1' then
                                    l_vseq_reg(8 * i + 7 downto 8 * i) <= std_ulogic_vector(vseq_reg + 1);
                                else
                                    l_vseq_reg(8 * i + 7 downto 8 * i) <= std_ulogic_vector(vseq_reg);
                                end if;
                            end if;
                            -- The marker alone, to lane lb.
                            if m_only = '1' and lb_i then
                                l_valid_reg(i) <= '1';
                                l_data_reg(DATA_W * i + DATA_W - 1 downto DATA_W * i) <= p_data;
                                l_crc_lo_reg(WL_c * i + WL_c - 1 downto WL_c * i) <= (others => '0');
                                l_crc_hi_reg(WL_c * i + WL_c - 1 downto WL_c * i) <=
                                    std_ulogic_vector(to_unsigned(1, WL_c));
                                l_ulp_lo_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= (others => '0');
                                l_ulp_hi_reg(OL_c * i + OL_c - 1 downto OL_c * i) <= (others => '0');
                                l_run_first_reg(i) <= '1';
                                l_run_last_reg(i) <= '1';
                                l_resume_reg(i) <= '0';
                                l_nopiece_reg(i) <= '1';
                                l_fpdu_first_reg(i) <= '0';
                                l_fpdu_end_reg(i) <= '0';
                                l_conn_reg(CONN_W * i + CONN_W - 1 downto CONN_W * i) <= p_conn;
                                l_crc_en_reg(i) <= p_crc_en;
                                l_mkbad_reg(i) <= b_mkbad;
                                l_lenbad_reg(i) <= '0';
                            end if;
                        end loop;
                        if m_only = '1' then
                            gl_reg <= lb;
                            mkbad_reg <= b_mkbad;
                        end if;
                        vseq_reg <= vseq_reg + as_u(a_end) + as_u(b_end);
                        if a_present = '1' and a_new = '1' then
                            gl_reg <= la;
                        end if;
                        if b_present = '1' then
                            gl_reg <= lb;
                            lead_reg <= '0';
                            pad_reg <= b_pad;
                            mkbad_reg <= b_mkbad;
                            lenbad_reg <= b_lenbad;
                        elsif a_present = '1' then
                            mkbad_reg <= a_mkbad;
                        end if;
                        run_open_reg <= open_after;
                        if more = '1' then
                            s_reg <= (others => '0');
                        else
                            s_reg <= s_next;
                        end if;
                        since_reg <= since_next;
                        pos_reg <= after_b;
                        first_pass_reg <= done;
                        if done = '1' and p_last = '1' then
                            mrg_en_reg <= open_after;
                        end if;
                        if seg_end = '1' then
                            wstate_reg <= W_IDLE_c;
                            if open_after = '1' then
                                if pend_v(0) = '0' then
                                    pend_v(0) <= '1';
                                    pend_c0 <= p_conn;
                                else
                                    pend_v(1) <= '1';
                                    pend_c1 <= p_conn;
                                end if;
                            end if;
                        end if;
                    end if;
                when others =>
                    wstate_reg <= W_IDLE_c;
            end case;

            -- The next segment's state as this one ends (after the case: it
            -- wins); for the same connection, the word written now.
            if load_run = '1' then
                if lk_conn = p_conn then
                    ld := st_wr_data;
                else
                    ld := st_now;
                end if;
                s_reg <= unsigned(ld(36 downto 21));
                since_reg <= unsigned(ld(20 downto 5));
                pad_reg <= unsigned(ld(4 downto 3));
                mkbad_reg <= ld(2);
                lenbad_reg <= ld(1);
                lead_reg <= ld(0);
                state_reg <= crc_now;
                run_open_reg <= '0';
                first_pass_reg <= '1';
                wstate_reg <= W_RUN_c;
            end if;

            if rst = '1' then
                p_valid <= '0';
                wstate_reg <= W_IDLE_c;
                l_valid_reg <= "00";
                pend_v <= "00";
                mrg_en_reg <= '1';
                gl_reg <= '0';
                vseq_reg <= (others => '0');
            end if;
        end if;
    end process p_reg;

end architecture rtl;
