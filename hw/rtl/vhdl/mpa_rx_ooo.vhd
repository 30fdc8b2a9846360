-- mpa_rx_ooo: out-of-order delineation for the MPA receive path (RFC 5044
-- 6, cases 2 and 3; appendix A.3). Sits on mpa_rx's exception stream and
-- passes it on unchanged; from every segment there that came out of order
-- (reason 3) on a connection with markers, it finds the FPDUs wholly inside
-- the segment through the segment's own markers and hands their ULPDUs on,
-- validated, for early placement (m_early). The segment still goes out on
-- the exception stream: the host (TCP reassembly) gives its octets back to
-- mpa_rx once the hole before it closes, which delineates, verifies and
-- delivers them again. Delivery is never early; only placement is.
--
-- VHDL-2008 twin of hw/rtl/mpa_rx_ooo.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_rx_ooo/test_mpa_rx_ooo.py drives
-- both (the Verilog header has the interface and the rules in full). In
-- brief, what is found is what iwarp/mpa's OOOReceiver places early from the
-- same segment when it holds nothing else out of order:
--   - every marker whose four octets are in the segment points (FPDUPTR,
--     RFC 5044 4.2, low two bits ignored; 0 = the FPDU right behind the
--     marker) to a candidate ULPDU_Length field;
--   - a candidate is tried when it, and its leading marker if one sits in
--     front of it, lies in the segment, it is not itself a marker position,
--     and it lies past every FPDU already found and every candidate already
--     tried (candidates are taken in marker order);
--   - the FPDU there is found when all of it, from its leading marker to
--     its CRC, is in the segment, its CRC is good (CRCs on), every marker
--     inside it points back to its ULPDU_Length field (the leading one with
--     FPDUPTR 0), and no marker behind its end points to it (the marker
--     that found it lies inside it, RFC 5044 6 case 2);
--   - the FPDU right behind a found one is tried next (case 3), then the
--     candidates of the markers behind it.
--
-- Interfaces. cfg_*: as mpa_rx's (no cfg_en); written at once, cfg_ready is
-- always high. s_exc_* / m_exc_*: mpa_rx's exception stream, tuser = conn &
-- seq(31 downto 0) & len(15 downto 0) & reason(2 downto 0), passed through
-- beat for beat, combinationally; a segment to delineate (reason 3, len
-- 1 .. SEG_OCTETS - DATA_W/8) that finds the block free waits 2 clocks at
-- its first beat, then passes through while it is copied into the segment
-- buffer.
-- m_skip_*: a one-clock pulse for each reason-3 segment passed on without a
-- search: conn, seq, reason 1 (busy with another segment) or 2 (longer
-- than the buffer). A segment that comes while the block searches the one
-- before passes on at once: the exception stream is never held up.
-- busy: a segment is being searched or ULPDUs found are still to go out.
-- m_early_*: one frame per FPDU found, its ULPDU lane-0 aligned, tkeep a run
-- from lane 0 (the last beat may be empty), tuser = seq(31 downto 0) of its
-- ULPDU_Length field & ulpdu_len(15 downto 0) & conn; stream order.
--
-- How: the segment is written stream-aligned into a buffer (sdp_ram, octet
-- s of the stream in lane s mod N, as in mpa_rx_align), so markers are word
-- 0 of their beat and FPDUs start on words; the markers are read, one a
-- clock, into a table of candidates (see "the candidates"), and tried one
-- after another (see "candidate selection"); each candidate FPDU is walked
-- a beat a clock through an mpa_rx_lane (CRC32c, ULPDU packing) into an
-- output buffer that keeps the frame only if its verdict is good. The walk
-- is set up from the FPDU's header over four clocks, works out each beat's
-- figures a beat ahead and hands the lane a registered command (see "the
-- walk through one FPDU"); the marker checks that make an FPDU bad are made
-- beside the lane. About 17 clocks per FPDU plus one per beat, the
-- segment's beats once more to copy it, and about ten clocks per segment
-- for its figures and the marker pipeline: the clocks buy shallow logic,
-- every sum an fadd (one clock) or a two-clock sum72a/sum72b, every
-- comparison of positions a gt33 (rnic_pkg, as rnic_arith.vh in the
-- Verilog).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_rx_ooo is
    generic (
        DATA_W     : natural := 64;
        CONN_W     : natural := 10;
        SEG_OCTETS : natural := 16384     -- segment buffer; longest segment taken: SEG_OCTETS - DATA_W/8
    );
    port (
        clk            : in  std_logic := '0';
        rst            : in  std_logic := '0';

        cfg_valid      : in  std_logic := '0';
        cfg_ready      : out std_logic := '0';
        cfg_conn       : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_mrk_en     : in  std_logic := '0';
        cfg_crc_en     : in  std_logic := '0';
        cfg_base       : in  std_logic_vector(31 downto 0) := (others => '0');

        s_exc_tdata    : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_exc_tkeep    : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_exc_tvalid   : in  std_logic := '0';
        s_exc_tready   : out std_logic := '0';
        s_exc_tlast    : in  std_logic := '0';
        s_exc_tuser    : in  std_logic_vector(CONN_W + 50 downto 0) := (others => '0');

        m_exc_tdata    : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_exc_tkeep    : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_exc_tvalid   : out std_logic := '0';
        m_exc_tready   : in  std_logic := '0';
        m_exc_tlast    : out std_logic := '0';
        m_exc_tuser    : out std_logic_vector(CONN_W + 50 downto 0) := (others => '0');

        m_early_tdata  : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_early_tkeep  : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_early_tvalid : out std_logic := '0';
        m_early_tready : in  std_logic := '0';
        m_early_tlast  : out std_logic := '0';
        m_early_tuser  : out std_logic_vector(CONN_W + 47 downto 0) := (others => '0');

        m_skip_valid   : out std_logic := '0';
        m_skip_conn    : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_skip_seq     : out std_logic_vector(31 downto 0) := (others => '0');
        m_skip_reason  : out std_logic_vector(1 downto 0) := (others => '0');

        busy           : out std_logic := '0'
    );
end entity mpa_rx_ooo;

architecture rtl of mpa_rx_ooo is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_rx_ooo: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        assert SEG_OCTETS >= 1024 and SEG_OCTETS <= 32768 and 2 ** clog2(SEG_OCTETS) = SEG_OCTETS
            report "mpa_rx_ooo: SEG_OCTETS must be a power of two in 1024..32768, not "
                   & integer'image(SEG_OCTETS)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c       : positive := DATA_W / 8;
    constant LN_c      : positive := clog2(N_c);
    constant WORDS_c   : positive := DATA_W / 32;
    constant WL_c      : positive := clog2(WORDS_c) + 1;      -- a word position 0 .. WORDS
    constant OL_c      : positive := LN_c + 1;                -- an octet position 0 .. N
    constant SEG_AW_c  : positive := clog2(SEG_OCTETS) - LN_c;
    constant PW_c      : positive := 17;                      -- a position in the buffer (< SEG_OCTETS + N), with room above
    constant PWW_c     : positive := PW_c - 2;                -- a buffer position in words
    constant K_c       : positive := SEG_OCTETS / 512 + 1;    -- markers a segment can hold
    constant KW_c      : positive := clog2(K_c + 1);
    constant SEG_MAX_c : natural := SEG_OCTETS - N_c;
    constant OUT_W_c   : positive := DATA_W + N_c + 1 + 32 + 16 + CONN_W;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype pos_t is unsigned(PW_c - 1 downto 0);
    subtype posw_t is unsigned(PWW_c - 1 downto 0);
    subtype w_t is unsigned(WL_c - 1 downto 0);
    subtype o_t is unsigned(OL_c - 1 downto 0);
    subtype beat_t is unsigned(SEG_AW_c downto 0);
    subtype kidx_t is unsigned(KW_c - 1 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype u32_t is unsigned(31 downto 0);
    subtype state_t is std_ulogic_vector(3 downto 0);
    type posw_arr_t is array (0 to K_c - 1) of posw_t;

    constant EXC_OUT_OF_ORDER_c : unsigned(2 downto 0) := "011";

    constant S_IDLE_c  : state_t := "0000";
    constant S_LOOK_c  : state_t := "0001";
    constant S_CAP_c   : state_t := "0010";
    constant S_FLUSH_c : state_t := "0011";
    constant S_DISC_c  : state_t := "0100";
    constant S_SEL_c   : state_t := "0101";
    constant S_HDR_c   : state_t := "0110";
    constant S_HDR2_c  : state_t := "0111";
    constant S_WALK_c  : state_t := "1000";
    constant S_VWAIT_c : state_t := "1001";
    constant S_HDR3_c  : state_t := "1010";
    constant S_HDR4_c  : state_t := "1011";
    constant S_PREP_c  : state_t := "1100";

    -- the walk through one FPDU
    constant MKP_c     : positive := 512 / N_c;             -- beats from one marker to the next
    constant MW_c      : positive := 9 - LN_c;
    constant WORDS_W_c : w_t := to_unsigned(WORDS_c, WL_c);
    constant W2_c      : unsigned(6 downto 0) := to_unsigned(2 * WORDS_c, 7);
    constant N2_c      : unsigned(OL_c + 1 downto 0) := to_unsigned(2 * N_c, OL_c + 2);
    constant NO_c      : o_t := to_unsigned(N_c, OL_c);
    constant FOUR_c    : unsigned(OL_c + 1 downto 0) := to_unsigned(4, OL_c + 2);

    subtype mkc_t is unsigned(MW_c - 1 downto 0);
    subtype thr_t_t is unsigned(6 downto 0);
    subtype thr_u_t is unsigned(OL_c + 1 downto 0);

    -- Marker positions: stream offset mod 512 = 0, i.e. buffer position p
    -- with (mb + p) mod 512 = 0.
    function is_mk(mb : unsigned(8 downto 0); p : pos_t) return boolean is
    begin
        return mb + p(8 downto 0) = 0;
    end function is_mk;

    -- 0 or 1, to add a flag to a count.
    function as_u(b : std_ulogic) return natural is
    begin
        if b = '1' then
            return 1;
        end if;
        return 0;
    end function as_u;

    signal state_reg : state_t := S_IDLE_c;

    -- --- per-connection settings: markers & CRCs & base mod 512 ---

    signal x_conn   : conn_t := (others => '0');
    signal x_seq    : u32_t := (others => '0');
    signal x_len    : u16_t := (others => '0');
    signal x_reason : unsigned(2 downto 0) := (others => '0');

    signal exc_mid_reg : std_ulogic := '0';    -- inside an exception frame: the next beat is not a first beat
    signal x_ooo, x_cap, x_first_cap, look, scanning : std_ulogic := '0';

    signal set_wd : std_ulogic_vector(10 downto 0) := (others => '0');
    signal set_rd : std_logic_vector(10 downto 0) := (others => '0');

    -- --- the exception stream, passed through ---

    signal x_open, s_exc_tready_i, x_go : std_ulogic := '0';

    -- --- the segment being delineated ---

    signal cap_en_reg  : std_ulogic := '0';               -- copy it (markers on)
    signal crc_en_reg  : std_ulogic := '0';
    signal conn_reg    : conn_t := (others => '0');
    signal seq_reg     : u32_t := (others => '0');
    signal a_reg       : unsigned(LN_c - 1 downto 0) := (others => '0');  -- lane of its first octet: (seq - base) mod N
    signal mb_reg      : unsigned(8 downto 0) := (others => '0');        -- stream offset of buffer position 0, mod 512
    signal len_reg     : u16_t := (others => '0');        -- its length
    signal prev_reg    : data_t := (others => '0');       -- the previous input beat
    signal wr_beat_reg : beat_t := (others => '0');
    signal prep_n_reg  : unsigned(1 downto 0) := (others => '0');  -- S_PREP: clocks left
    signal extra_reg   : std_ulogic := '0';
    -- While the segment is copied its beats come at the input's pace (the
    -- stream passes through in S_CAP whatever the segment's tuser says).
    signal cap_go      : std_ulogic := '0';

    signal a_up     : o_t := (others => '0');
    signal al_in    : data_t := (others => '0');
    signal al_fl    : data_t := (others => '0');
    signal len_tail : o_t := (others => '0');

    signal seg_wr   : std_ulogic := '0';
    signal seg_wd   : data_t := (others => '0');
    signal seg_wa   : std_ulogic_vector(SEG_AW_c - 1 downto 0) := (others => '0');
    signal seg_re   : std_ulogic := '0';
    signal seg_ra   : unsigned(SEG_AW_c - 1 downto 0) := (others => '0');
    signal seg_ra_v : std_ulogic_vector(SEG_AW_c - 1 downto 0) := (others => '0');
    signal seg_rd   : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');

    -- Figures of the segment, worked out a sum a clock from its length and
    -- lane (stable from its first beat on; S_PREP waits for them): e, the
    -- buffer position past its last octet; e - 1; e - 1 - N; e - 8 (the
    -- furthest a candidate's ULPDU_Length field may lie: the shortest FPDU,
    -- header, pad and CRC, takes 8 octets); e - 4 - p0, from which the
    -- number of markers whose four octets are in it; its base, seq - a.
    -- Each is one fadd (4 LUT levels) or a two-clock sum.
    signal e_reg      : pos_t := (others => '0');
    signal el_reg     : pos_t := (others => '0');         -- e - 1: its last octet
    signal lim_reg    : unsigned(PW_c downto 0) := (others => '0');   -- e - 4 - p0, signed
    signal mk_cnt_reg : kidx_t := (others => '0');        -- markers in the segment
    signal w8_reg     : unsigned(PWW_c downto 0) := (others => '0');  -- floor((e - 8) / 4), signed: a candidate's word is at most this
    signal aw_reg     : w_t := (others => '0');           -- its first whole word, ceil(a / 4)
    signal m0w_reg    : unsigned(6 downto 0) := (others => '0');      -- marker positions mod 512, in words
    signal bs_sa_reg  : u162_t := (others => '0');
    signal base_reg   : u32_t := (others => '0');         -- seq - a: the stream's sequence number at buffer position 0

    -- --- the candidates: one per marker ---
    -- A marker at buffer position p (words P) with FPDUPTR q (words Q)
    -- points to the ULPDU_Length field at t = p - q (RFC 5044 4.2), or at
    -- p + 4 for q = 0, the FPDU right behind it. Read one a clock, and
    -- worked out over four clocks into the tables: D1 has the marker on
    -- seg_rd and sums U = P - Q - 1 and T = P - Q; D2 picks them (q = 0:
    -- T = P + 1, U = P) and checks t against the marker positions; D3 the
    -- bounds; D4 writes. What does not change while candidates are tried is
    -- worked out here: whether a leading marker sits at t - 4 (then the
    -- FPDU starts there), the FPDU's first position, and whether the
    -- candidate may be tried at all (it lies at or after position 0, is not
    -- itself a marker position, leaves room for the shortest FPDU before e,
    -- and its first octet is in the segment).

    signal p0_reg     : pos_t := (others => '0');         -- the first marker position at or after a
    signal mk_pos_reg : pos_t := (others => '0');         -- next marker to read
    signal mk_n_reg   : kidx_t := (others => '0');        -- markers read
    signal t_tab      : posw_arr_t := (others => (others => '0'));   -- its candidate's position, in words
    signal f_tab      : posw_arr_t := (others => (others => '0'));   -- the candidate FPDU's first position, in words
    signal m_tab      : posw_arr_t := (others => (others => '0'));   -- the marker's position, in words
    signal v_tab      : std_ulogic_vector(K_c - 1 downto 0) := (others => '0');  -- the candidate lies at or after position 0
    signal s_tab      : std_ulogic_vector(K_c - 1 downto 0) := (others => '0');  -- ... and may be tried
    signal l_tab      : std_ulogic_vector(K_c - 1 downto 0) := (others => '0');  -- ... and has a leading marker

    signal disc_more : std_ulogic := '0';

    signal d1_valid_reg, d2_valid_reg, d3_valid_reg, d4_valid_reg : std_ulogic := '0';
    signal d1_idx_reg, d2_idx_reg, d3_idx_reg, d4_idx_reg : kidx_t := (others => '0');
    signal d1_p_reg, d2_p_reg, d3_p_reg, d4_p_reg : posw_t := (others => '0');
    signal d2_z_reg : std_ulogic := '0';                                    -- FPDUPTR 0
    signal d2_u_reg, d2_t_reg : unsigned(PWW_c downto 0) := (others => '0');   -- U and T, signed
    signal d3_t_reg, d3_f_reg, d4_t_reg, d4_f_reg : posw_t := (others => '0');
    signal d3_ok_reg, d3_onmk_reg, d3_lead_reg : std_ulogic := '0';
    signal d4_ok_reg, d4_st_reg, d4_lead_reg : std_ulogic := '0';

    -- D1: P + not Q (+ 1) within PWW + 1 bits, the sign on top.
    signal d1_q : unsigned(13 downto 0) := (others => '0');
    signal d1_x : u32_t := (others => '0');
    signal d1_y : u32_t := (others => '0');
    signal d1_u : u33_t := (others => '0');
    signal d1_t : u33_t := (others => '0');
    -- D2: pick; a leading marker at t - 4 (t >= 4).
    signal d2_tw   : posw_t := (others => '0');
    signal d2_uw   : posw_t := (others => '0');
    signal d2_lead : std_ulogic := '0';
    -- D3: the bounds.
    signal d3_fits : std_ulogic := '0';
    signal d3_fge  : std_ulogic := '0';

    -- --- candidate selection ---
    -- Candidates are tried in marker order, over three clocks: R reads the
    -- tables, G checks the candidate against what was tried and found
    -- before (it lies past the last one tried and its FPDU past the last
    -- one found), and a candidate that passes is taken a clock later; the
    -- two behind it are dropped and read again after its walk, against the
    -- new bounds.

    signal sel_i_reg  : kidx_t := (others => '0');        -- next to read
    signal r_valid_reg, r_st_reg, r_lead_reg : std_ulogic := '0';
    signal r_i_reg    : kidx_t := (others => '0');
    signal r_t_reg, r_f_reg : posw_t := (others => '0');
    signal g_go_reg, g_lead_reg : std_ulogic := '0';
    signal g_i_reg    : kidx_t := (others => '0');
    signal g_t_reg, g_f_reg : posw_t := (others => '0');
    signal fl_reg     : posw_t := (others => '0');        -- the last candidate tried
    signal fl_any_reg : std_ulogic := '0';
    signal cov_reg    : posw_t := (others => '0');        -- past the last FPDU found, in words
    signal s_reg      : pos_t := (others => '0');         -- the candidate being tried: its ULPDU_Length
    signal from_reg   : pos_t := (others => '0');         -- its first octet (its leading marker, if any)
    signal lead_reg   : std_ulogic := '0';

    signal r_go    : std_ulogic := '0';
    signal sel_end : std_ulogic := '0';

    -- --- the walk through one FPDU ---

    signal k_reg       : beat_t := (others => '0');       -- the walker's beat
    signal wk_reg      : std_ulogic := '0';               -- it has a beat to issue
    signal first_reg   : std_ulogic := '0';
    signal kmk_reg     : std_ulogic := '0';               -- a marker in the beat's word 0 (not on the first beat)
    signal mkc_reg     : mkc_t := (others => '0');        -- beats after this one to the next marker beat, less 1
    signal t_rem_reg   : unsigned(14 downto 0) := (others => '0');  -- content words left (the beat's on), the CRC word included
    signal u_rem_reg   : u16_t := (others => '0');        -- ULPDU octets left
    signal ulen_reg    : u16_t := (others => '0');
    signal h_len_reg   : u16_t := (others => '0');
    signal avail_reg   : w_t := (others => '0');          -- content words in the beat
    signal w_ends_reg  : std_ulogic := '0';               -- its CRC word is in the beat
    signal crcw_reg    : w_t := (others => '0');          -- ... that word (mod 2^WL)
    signal thr_t0_reg  : thr_t_t := (others => '0');      -- next beat ends the FPDU if t_rem <= this (no marker in it)
    signal thr_t1_reg  : thr_t_t := (others => '0');      -- ... (a marker in it)
    signal ulp_lo_reg  : o_t := (others => '0');          -- the ULPDU's first lane in the beat
    signal room_reg    : o_t := (others => '0');          -- N - ulp_lo
    signal u_fills_reg : std_ulogic := '0';               -- u_rem >= room
    signal uh_reg      : o_t := (others => '0');          -- ulp_lo + u_rem (mod 2^OL; the ULPDU's end if it ends here)
    signal thr_u0_reg  : thr_u_t := (others => '0');      -- next beat filled if u_rem >= this (no marker in it)
    signal thr_u1_reg  : thr_u_t := (others => '0');      -- ... (a marker in it)
    signal k_last_reg  : std_ulogic := '0';               -- the beat holds the segment's last octet
    signal dist_reg    : pos_t := (others => '0');        -- k * N - s
    signal mkbad_reg   : std_ulogic := '0';               -- the FPDU is bad (markers, or cut by the segment's end)
    signal end_reg     : pos_t := (others => '0');        -- past the FPDU's CRC
    signal vgot_reg, vgood_reg, fdone_reg : std_ulogic := '0';
    -- per segment
    signal lastk_reg   : beat_t := (others => '0');       -- the beat of its last octet
    signal lastkm1_reg : beat_t := (others => '0');
    signal e_w_reg     : w_t := (others => '0');          -- whole words of it in that beat
    signal mk0_reg     : mkc_t := (others => '0');        -- the first marker beat, mod MKP

    signal s_w     : w_t := (others => '0');
    signal w_abort : std_ulogic := '0';
    signal w_last  : std_ulogic := '0';
    -- the next beat
    signal kmk_n   : std_ulogic := '0';
    signal t_rem_n : unsigned(14 downto 0) := (others => '0');
    signal t_rem_d, u_rem_d : u33_t := (others => '0');
    signal le_t0, le_t1, ge_u0, ge_u1 : std_ulogic := '0';
    signal u_low_n : o_t := (others => '0');

    -- --- C: the beat's command, its octets on seg_rd ---

    signal c_valid_reg : std_ulogic := '0';
    signal c_first_reg, c_last_reg, c_abort_reg, c_lead_reg, c_kmk_reg : std_ulogic := '0';
    signal c_dist_reg  : pos_t := (others => '0');
    signal c_crc_lo_reg, c_crc_hi_reg, c_crcw_reg : w_t := (others => '0');
    signal c_ulp_lo_reg, c_ulp_hi_reg : o_t := (others => '0');

    signal lane_ready : std_logic := '0';
    signal c_adv   : std_ulogic := '0';
    signal issue   : std_ulogic := '0';
    signal l_take  : std_ulogic := '0';
    signal w_ptr   : unsigned(13 downto 0) := (others => '0');
    signal w_mkbad : std_ulogic := '0';
    signal h_len   : u16_t := (others => '0');

    -- per segment: the octets of the segment in its last beat, the first
    -- marker beat
    signal e_lo     : unsigned(LN_c downto 0) := (others => '0');
    signal mk_first : unsigned(8 downto 0) := (others => '0');

    -- no marker behind the FPDU may point to it: checked over two clocks
    -- after the walk
    signal lb_vec_reg : std_ulogic_vector(K_c - 1 downto 0) := (others => '0');
    signal lb_reg     : std_ulogic := '0';
    signal lb_n_reg   : unsigned(1 downto 0) := (others => '0');

    -- --- the lane ---

    signal l_valid  : std_ulogic := '0';
    signal l_crc_lo : std_ulogic_vector(WL_c - 1 downto 0) := (others => '0');
    signal l_crc_hi : std_ulogic_vector(WL_c - 1 downto 0) := (others => '0');
    signal l_crcw   : std_ulogic_vector(WL_c - 2 downto 0) := (others => '0');
    signal l_ulp_lo : std_ulogic_vector(OL_c - 1 downto 0) := (others => '0');
    signal l_ulp_hi : std_ulogic_vector(OL_c - 1 downto 0) := (others => '0');
    signal l_ulen   : std_ulogic_vector(15 downto 0) := (others => '0');

    signal p_tdata  : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
    signal p_tkeep  : std_logic_vector(N_c - 1 downto 0) := (others => '0');
    signal p_tvalid, p_tlast : std_logic := '0';
    signal p_tready : std_ulogic := '0';
    signal p_ulen   : std_logic_vector(15 downto 0) := (others => '0');
    signal v_valid  : std_logic := '0';
    signal v_code   : std_logic_vector(2 downto 0) := (others => '0');
    -- the lane's per-frame fields the block keeps itself
    signal p_conn_unused, v_conn_unused, wb_conn_unused : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal p_first_unused, p_last_unused, wb_valid_unused : std_logic := '0';
    signal v_vseq_unused : std_logic_vector(7 downto 0) := (others => '0');
    signal wb_state_unused : std_logic_vector(31 downto 0) := (others => '0');

    -- --- output buffer: a frame is kept only if its verdict is good ---

    signal o_wp_reg, o_cp_reg, o_rp_reg : beat_t := (others => '0');   -- written, committed, read
    signal o_used  : beat_t := (others => '0');
    signal o_push  : std_ulogic := '0';
    signal o_room_reg : std_ulogic := '0';                -- room for the lane's next word
    -- The FPDU's ULPDU_Length field's sequence number, base + s, a
    -- two-clock sum worked out while its header is read (s is set two
    -- clocks before its first beat can reach the lane, and stays until its
    -- last is written).
    signal sq_sa_reg : u162_t := (others => '0');
    signal s_seq32   : u32_t := (others => '0');
    signal o_vld_reg : std_ulogic := '0';                 -- o_rd holds a word not yet at the output
    signal o_move, o_issue : std_ulogic := '0';
    signal o_wd    : std_ulogic_vector(OUT_W_c - 1 downto 0) := (others => '0');
    signal o_wa    : std_ulogic_vector(SEG_AW_c - 1 downto 0) := (others => '0');
    signal o_ra    : std_ulogic_vector(SEG_AW_c - 1 downto 0) := (others => '0');
    signal o_rd    : std_logic_vector(OUT_W_c - 1 downto 0) := (others => '0');

    signal m_early_tdata_reg  : data_t := (others => '0');
    signal m_early_tkeep_reg  : std_ulogic_vector(N_c - 1 downto 0) := (others => '0');
    signal m_early_tvalid_reg : std_ulogic := '0';
    signal m_early_tlast_reg  : std_ulogic := '0';
    signal m_early_tuser_reg  : std_ulogic_vector(CONN_W + 47 downto 0) := (others => '0');

    -- --- control ---

    signal next_s_reg  : pos_t := (others => '0');
    signal next_mk_reg : std_ulogic := '0';
    signal end_in_reg  : std_ulogic := '0';               -- end < e: the segment goes on behind the FPDU
    signal v_done, v_good : std_ulogic := '0';
    -- Past the CRC word of the walker's beat: 4 (crcw + 1) octets into it.
    signal k_inc    : beat_t := (others => '0');
    signal crcw_inc : unsigned(WL_c - 2 downto 0) := (others => '0');
    signal w_end    : pos_t := (others => '0');

    -- The sums (fadd: one clock, 4 LUT levels); operands zero-extended, a
    -- subtrahend as its complement within the sum's width.
    constant N_PW_c    : pos_t := to_unsigned(N_c, PW_c);
    constant FOUR_PW_c : pos_t := to_unsigned(4, PW_c);
    constant ONES_PW_c : pos_t := (others => '1');
    signal a_p3    : unsigned(LN_c downto 0) := (others => '0');
    signal e_sum   : u33_t := (others => '0');
    signal el_sum  : u33_t := (others => '0');
    signal elm_sum : u33_t := (others => '0');
    signal em8_sum : u33_t := (others => '0');
    signal lim_sum : u33_t := (others => '0');
    signal ds_sum  : u33_t := (others => '0');
    signal t_rem0  : u33_t := (others => '0');
    signal ds_reg  : pos_t := (others => '0');
    signal sq_sum  : u73_t := (others => '0');
    signal bs_sum  : u73_t := (others => '0');

begin

    -- --- per-connection settings -------------------------------------------------------

    cfg_ready <= '1';

    x_conn <= s_exc_tuser(CONN_W + 50 downto 51);
    x_seq <= unsigned(s_exc_tuser(50 downto 19));
    x_len <= unsigned(s_exc_tuser(18 downto 3));
    x_reason <= unsigned(s_exc_tuser(2 downto 0));

    x_ooo <= to_sl(x_reason = EXC_OUT_OF_ORDER_c and x_len /= 0);
    x_cap <= x_ooo and to_sl(x_len <= SEG_MAX_c);
    x_first_cap <= (not exc_mid_reg) and x_cap;
    -- Searching the segment before: this one passes on without a search.
    scanning <= to_sl(state_reg /= S_IDLE_c and state_reg /= S_LOOK_c and state_reg /= S_CAP_c);
    look <= to_sl(state_reg = S_IDLE_c) and s_exc_tvalid and x_first_cap;

    set_wd <= cfg_mrk_en & cfg_crc_en & cfg_base(8 downto 0);

    set_ram : entity work.sdp_ram
        generic map (WIDTH => 11, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => cfg_valid, wr_addr => cfg_conn, wr_data => set_wd,
            rd_en => look, rd_addr => x_conn, rd_data => set_rd
        );

    -- --- the exception stream, passed through (combinationally) -------------------------

    x_open <= exc_mid_reg or (not x_cap) or to_sl(state_reg = S_CAP_c) or scanning;
    m_exc_tdata <= s_exc_tdata;
    m_exc_tkeep <= s_exc_tkeep;
    m_exc_tlast <= s_exc_tlast;
    m_exc_tuser <= s_exc_tuser;
    m_exc_tvalid <= s_exc_tvalid and x_open;
    s_exc_tready_i <= m_exc_tready and x_open;
    s_exc_tready <= s_exc_tready_i;
    x_go <= s_exc_tvalid and s_exc_tready_i;

    -- --- the segment being delineated ---------------------------------------------------

    -- Stream alignment: beat k of the buffer is input beats k-1 and k,
    -- shifted up by a lanes (the Verilog takes it from {tdata, prev} at
    -- N - a lanes; a flush from {0, prev}).
    a_up <= to_unsigned(N_c, OL_c) - resize(a_reg, OL_c);

    p_align : process (all) is
        variable dbl : std_ulogic_vector(2 * DATA_W - 1 downto 0);
        variable sh  : natural;
    begin
        sh := 8 * to_integer(a_up);
        dbl := s_exc_tdata & prev_reg;
        al_in <= dbl(sh + DATA_W - 1 downto sh);
        dbl(2 * DATA_W - 1 downto DATA_W) := (others => '0');
        al_fl <= dbl(sh + DATA_W - 1 downto sh);
    end process p_align;

    -- The last input beat leaves octets for one more buffer beat when
    -- a + (len mod N, or N) > N.
    len_tail <= to_unsigned(N_c, OL_c) when x_len(LN_c - 1 downto 0) = 0 else
                resize(x_len(LN_c - 1 downto 0), OL_c);

    cap_go <= s_exc_tvalid and m_exc_tready;

    seg_wr <= (to_sl(state_reg = S_CAP_c) and cap_en_reg and cap_go) or to_sl(state_reg = S_FLUSH_c);
    seg_wd <= al_fl when state_reg = S_FLUSH_c else al_in;
    seg_wa <= std_ulogic_vector(wr_beat_reg(SEG_AW_c - 1 downto 0));
    seg_ra_v <= std_ulogic_vector(seg_ra);

    seg_ram : entity work.sdp_ram
        generic map (WIDTH => DATA_W, ADDR_W => SEG_AW_c)
        port map (
            clk => clk,
            wr_en => seg_wr, wr_addr => seg_wa, wr_data => seg_wd,
            rd_en => seg_re, rd_addr => seg_ra_v, rd_data => seg_rd
        );

    -- --- the candidates: one per marker (see their declarations) -------------------------

    disc_more <= to_sl(state_reg = S_DISC_c and mk_n_reg /= mk_cnt_reg);

    -- D1: P + not Q (+ 1) within PWW + 1 bits, the sign on top.
    d1_q <= unsigned(seg_rd(23 downto 16)) & unsigned(seg_rd(31 downto 26));
    d1_x <= resize(d1_p_reg, 32);
    d1_y <= resize(not resize(d1_q, PWW_c + 1), 32);
    d1_u <= fadd(d1_x, d1_y, '0');
    d1_t <= fadd(d1_x, d1_y, '1');
    -- D2: pick; a leading marker at t - 4 (t >= 4).
    d2_tw <= (d2_p_reg or to_unsigned(1, PWW_c)) when d2_z_reg = '1' else d2_t_reg(PWW_c - 1 downto 0);
    d2_uw <= d2_p_reg when d2_z_reg = '1' else d2_u_reg(PWW_c - 1 downto 0);
    d2_lead <= d2_z_reg or ((not d2_u_reg(PWW_c)) and to_sl(d2_u_reg(6 downto 0) = m0w_reg));
    -- D3: the bounds.
    d3_fits <= (not w8_reg(PWW_c)) and not gt33(d3_t_reg, w8_reg(PWW_c - 1 downto 0));
    d3_fge <= not gt33(aw_reg, d3_f_reg);

    -- --- candidate selection (see its declarations) ---------------------------------------

    r_go <= r_valid_reg and r_st_reg
            and ((not fl_any_reg) or gt33(r_t_reg, fl_reg))
            and not gt33(cov_reg, r_f_reg);
    sel_end <= to_sl(sel_i_reg = mk_n_reg) and (not r_valid_reg) and (not g_go_reg);

    -- --- the walk through one FPDU --------------------------------------------------------

    -- The walker makes one command a beat for the lane from its registers:
    -- a beat's figures (content words and ULPDU octets in it, whether the
    -- CRC word is in it, its marker) are worked out one beat ahead, against
    -- thresholds that are constants or set per FPDU. The command register C
    -- holds a beat's command while the beat is read from the buffer, and the
    -- lane takes it from there. C also checks the beat's marker against the
    -- beat's octets; a bad marker, an FPDU cut by the segment's end, or a
    -- marker behind the FPDU pointing to it (checked after the walk) make
    -- the FPDU bad outside the lane, which then drops its frame as for a bad
    -- CRC.

    s_w <= resize(s_reg(LN_c - 1 downto 2), WL_c);
    w_abort <= k_last_reg and ((not w_ends_reg) or to_sl(crcw_reg >= e_w_reg));
    w_last <= w_ends_reg or w_abort;
    -- the next beat
    kmk_n <= to_sl(mkc_reg = 0);
    -- (The loop's sums and comparisons as fadd and gt33: 4 LUT levels at most.)
    t_rem_d <= fadd(resize(t_rem_reg, 32), resize(not resize(avail_reg, 15), 32), '1');
    t_rem_n <= t_rem_d(14 downto 0);
    le_t0 <= not gt33(t_rem_reg, thr_t0_reg);
    le_t1 <= not gt33(t_rem_reg, thr_t1_reg);
    ge_u0 <= not gt33(thr_u0_reg, u_rem_reg);
    ge_u1 <= not gt33(thr_u1_reg, u_rem_reg);
    u_rem_d <= fadd(resize(u_rem_reg, 32), resize(not resize(room_reg, 16), 32), '1');
    u_low_n <= u_rem_reg(OL_c - 1 downto 0) - room_reg when u_fills_reg = '1' else (others => '0');

    -- C: the beat's command, its octets on seg_rd
    c_adv <= (not c_valid_reg) or lane_ready;
    issue <= to_sl(state_reg = S_WALK_c) and wk_reg and c_adv;
    l_take <= c_valid_reg and lane_ready;

    -- The beat's marker: the leading one must say 0, one inside the
    -- distance back to the ULPDU_Length field, in words (FPDUPTR's low bits
    -- ignored, as in mpa_rx_walk).
    w_ptr <= unsigned(seg_rd(23 downto 16)) & unsigned(seg_rd(31 downto 26));
    w_mkbad <= c_lead_reg and to_sl(w_ptr /= 0) when c_first_reg = '1' else
               c_kmk_reg and to_sl(resize(w_ptr, PW_c - 2) /= c_dist_reg(PW_c - 1 downto 2));

    -- Per segment: the octets of the segment in its last beat, the first
    -- marker beat.
    e_lo <= resize(el_reg(LN_c - 1 downto 0), LN_c + 1) + 1;
    mk_first <= 0 - mb_reg;

    p_h_len : process (all) is
        variable w : natural;
    begin
        w := to_integer(s_w);
        h_len <= unsigned(seg_rd(32 * w + 7 downto 32 * w)) & unsigned(seg_rd(32 * w + 15 downto 32 * w + 8));
    end process p_h_len;

    -- --- the lane: CRC32c, ULPDU packing, verdict ------------------------------------------

    l_valid <= c_valid_reg;
    l_crc_lo <= std_ulogic_vector(c_crc_lo_reg);
    l_crc_hi <= std_ulogic_vector(c_crc_hi_reg);
    l_crcw <= std_ulogic_vector(c_crcw_reg(WL_c - 2 downto 0));
    l_ulp_lo <= std_ulogic_vector(c_ulp_lo_reg);
    l_ulp_hi <= std_ulogic_vector(c_ulp_hi_reg);
    l_ulen <= std_ulogic_vector(ulen_reg);

    lane : entity work.mpa_rx_lane
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_valid => l_valid, s_ready => lane_ready, s_data => seg_rd,
            s_crc_lo => l_crc_lo, s_crc_hi => l_crc_hi, s_crcw => l_crcw,
            s_ulp_lo => l_ulp_lo, s_ulp_hi => l_ulp_hi,
            s_run_first => c_first_reg, s_run_last => c_last_reg, s_resume => '0', s_nopiece => '0',
            s_state => (others => '0'), s_fpdu_first => '1', s_fpdu_end => '1', s_conn => conn_reg,
            s_ulen => l_ulen, s_crc_en => crc_en_reg, s_mkbad => '0', s_lenbad => '0',
            s_vseq => (others => '0'),
            m_tdata => p_tdata, m_tkeep => p_tkeep, m_tvalid => p_tvalid, m_tready => p_tready,
            m_tlast => p_tlast, m_conn => p_conn_unused, m_ulen => p_ulen, m_first => p_first_unused,
            m_last => p_last_unused,
            v_valid => v_valid, v_ready => '1', v_conn => v_conn_unused, v_code => v_code,
            v_vseq => v_vseq_unused,
            wb_valid => wb_valid_unused, wb_conn => wb_conn_unused, wb_state => wb_state_unused
        );

    -- --- output buffer: a frame is kept only if its verdict is good --------------------------

    o_used <= o_wp_reg - o_rp_reg;
    -- Room for the lane's next word, from registers: at most one word a
    -- clock goes in, so a buffer with two words free (or one, not written in
    -- this clock) has room in the next.
    p_tready <= o_room_reg;
    o_push <= p_tvalid and p_tready;

    o_move <= o_vld_reg and ((not m_early_tvalid_reg) or m_early_tready);
    o_issue <= to_sl(o_rp_reg /= o_cp_reg) and ((not o_vld_reg) or o_move);

    o_wd <= p_tdata & p_tkeep & p_tlast & std_ulogic_vector(s_seq32) & p_ulen & conn_reg;
    o_wa <= std_ulogic_vector(o_wp_reg(SEG_AW_c - 1 downto 0));
    o_ra <= std_ulogic_vector(o_rp_reg(SEG_AW_c - 1 downto 0));

    out_ram : entity work.sdp_ram
        generic map (WIDTH => OUT_W_c, ADDR_W => SEG_AW_c)
        port map (
            clk => clk,
            wr_en => o_push, wr_addr => o_wa, wr_data => o_wd,
            rd_en => o_issue, rd_addr => o_ra, rd_data => o_rd
        );

    m_early_tdata <= m_early_tdata_reg;
    m_early_tkeep <= m_early_tkeep_reg;
    m_early_tvalid <= m_early_tvalid_reg;
    m_early_tlast <= m_early_tlast_reg;
    m_early_tuser <= m_early_tuser_reg;

    p_out_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if m_early_tvalid_reg = '1' and m_early_tready = '1' then
                m_early_tvalid_reg <= '0';
            end if;
            if o_move = '1' then
                m_early_tvalid_reg <= '1';
                m_early_tdata_reg <= o_rd(OUT_W_c - 1 downto OUT_W_c - DATA_W);
                m_early_tkeep_reg <= o_rd(OUT_W_c - DATA_W - 1 downto CONN_W + 49);
                m_early_tlast_reg <= o_rd(CONN_W + 48);
                m_early_tuser_reg <= o_rd(CONN_W + 47 downto 0);
            end if;
            o_vld_reg <= o_issue or (o_vld_reg and not o_move);
            o_room_reg <= to_sl(o_used < 2 ** SEG_AW_c - 1 and not (o_push = '1' and o_used = 2 ** SEG_AW_c - 2));
            if o_issue = '1' then
                o_rp_reg <= o_rp_reg + 1;
            end if;
            if rst = '1' then
                m_early_tvalid_reg <= '0';
                o_vld_reg <= '0';
                o_rp_reg <= (others => '0');
                o_room_reg <= '0';
            end if;
        end if;
    end process p_out_reg;

    busy <= to_sl(state_reg /= S_IDLE_c or o_rp_reg /= o_wp_reg) or o_vld_reg or m_early_tvalid_reg;

    -- --- control ---------------------------------------------------------------------------

    -- After an FPDU is found: the one right behind it (past a marker at its
    -- end), worked out while the verdict is awaited (next_s_reg,
    -- next_mk_reg). The verdict is taken from registers: the lane's (vgot,
    -- vgood), its frame's end (fdone), and the checks outside the lane
    -- (mkbad, lb).
    v_done <= vgot_reg and fdone_reg and to_sl(lb_n_reg = 2);
    v_good <= vgood_reg and (not mkbad_reg) and (not lb_reg);
    -- Past the CRC word of the walker's beat: 4 (crcw + 1) octets into it.
    k_inc <= k_reg + 1;
    crcw_inc <= crcw_reg(WL_c - 2 downto 0) + 1;
    w_end <= resize(k_inc & to_unsigned(0, LN_c), PW_c) when crcw_inc = 0 else
             resize(k_reg & crcw_inc & "00", PW_c);

    -- The sums (fadd: one clock, 4 LUT levels); operands zero-extended, a
    -- subtrahend as its complement within the sum's width.
    a_p3 <= resize(a_reg, LN_c + 1) + 3;
    e_sum <= fadd(resize(a_reg, 32), resize(len_reg, 32), '0');
    el_sum <= fadd(resize(e_reg, 32), resize(ONES_PW_c, 32), '0');
    elm_sum <= fadd(resize(e_reg, 32), resize(not N_PW_c, 32), '0');
    em8_sum <= fadd(resize(e_reg, 32), resize(not to_unsigned(7, PW_c + 1), 32), '0');
    lim_sum <= fadd(resize(e_reg, 32), resize(not ('0' & (p0_reg or FOUR_PW_c)), 32), '1');
    ds_sum <= fadd(resize(resize(k_reg & to_unsigned(0, LN_c), PW_c), 32), resize(not s_reg, 32), '1');
    t_rem0 <= fadd(resize(h_len_reg, 32), to_unsigned(9, 32), '0');
    sq_sum <= sum72b(sq_sa_reg);
    bs_sum <= sum72b(bs_sa_reg);

    p_seg_rd : process (all) is
    begin
        seg_re <= '0';
        seg_ra <= mk_pos_reg(SEG_AW_c + LN_c - 1 downto LN_c);
        case state_reg is
            when S_DISC_c =>
                seg_re <= disc_more;
            when S_HDR_c =>
                seg_re <= '1';
                seg_ra <= from_reg(SEG_AW_c + LN_c - 1 downto LN_c);
            when S_WALK_c =>
                seg_re <= issue;
                seg_ra <= k_reg(SEG_AW_c - 1 downto 0);
            when others =>
                null;
        end case;
    end process p_seg_rd;

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if x_go = '1' then
                exc_mid_reg <= not s_exc_tlast;
            end if;
            m_skip_valid <= x_go and (not exc_mid_reg) and x_ooo and ((not x_cap) or scanning);
            m_skip_conn <= x_conn;
            m_skip_seq <= std_logic_vector(x_seq);
            m_skip_reason <= "01" when x_cap = '1' else "10";
            if o_push = '1' then
                o_wp_reg <= o_wp_reg + 1;
            end if;

            case state_reg is
                when S_IDLE_c =>
                    if look = '1' then
                        conn_reg <= x_conn;
                        seq_reg <= x_seq;
                        state_reg <= S_LOOK_c;
                    end if;
                when S_LOOK_c =>
                    cap_en_reg <= set_rd(10);
                    crc_en_reg <= set_rd(9);
                    a_reg <= seq_reg(LN_c - 1 downto 0) - unsigned(set_rd(LN_c - 1 downto 0));
                    mb_reg <= (seq_reg(8 downto LN_c) - unsigned(set_rd(8 downto LN_c))
                               - as_u(to_sl(seq_reg(LN_c - 1 downto 0) < unsigned(set_rd(LN_c - 1 downto 0)))))
                              & to_unsigned(0, LN_c);
                    prev_reg <= (others => '0');
                    wr_beat_reg <= (others => '0');
                    state_reg <= S_CAP_c;
                when S_CAP_c =>
                    if cap_go = '1' then
                        prev_reg <= s_exc_tdata;
                        if seg_wr = '1' then
                            wr_beat_reg <= wr_beat_reg + 1;
                        end if;
                        if exc_mid_reg = '0' then
                            len_reg <= x_len;
                            extra_reg <= to_sl(resize(a_reg, OL_c) + len_tail > N_c);
                        end if;
                        if s_exc_tlast = '1' then
                            if cap_en_reg = '0' then
                                state_reg <= S_IDLE_c;
                            elsif (exc_mid_reg = '0' and resize(a_reg, OL_c) + len_tail > N_c)
                                  or (exc_mid_reg = '1' and extra_reg = '1') then
                                state_reg <= S_FLUSH_c;
                            else
                                state_reg <= S_PREP_c;
                            end if;
                            prep_n_reg <= "10";
                        end if;
                    end if;
                    -- The first marker position at or after the segment's first octet.
                    if mb_reg = 0 and a_reg /= 0 then
                        p0_reg <= to_unsigned(512, PW_c);
                    else
                        p0_reg <= resize(0 - mb_reg, PW_c);
                    end if;
                    mk_n_reg <= (others => '0');
                when S_FLUSH_c =>
                    state_reg <= S_PREP_c;
                when S_PREP_c =>
                    -- The segment's figures: three clocks from its length
                    -- (S_CAP's last clock may have been the clock its length
                    -- came in).
                    prep_n_reg <= prep_n_reg - 1;
                    mk_pos_reg <= p0_reg;
                    if prep_n_reg = 0 then
                        state_reg <= S_DISC_c;
                    end if;
                when S_DISC_c =>
                    if disc_more = '1' then
                        mk_pos_reg <= (mk_pos_reg(PW_c - 1 downto 9) + 1) & mk_pos_reg(8 downto 0);
                        mk_n_reg <= mk_n_reg + 1;
                    elsif d1_valid_reg = '0' and d2_valid_reg = '0' and d3_valid_reg = '0'
                          and d4_valid_reg = '0' then
                        sel_i_reg <= (others => '0');
                        cov_reg <= (others => '0');
                        fl_any_reg <= '0';
                        state_reg <= S_SEL_c;
                    end if;
                when S_SEL_c =>
                    -- R: read the next candidate; G: check the one read;
                    -- take the one checked.
                    r_valid_reg <= to_sl(sel_i_reg /= mk_n_reg);
                    if sel_i_reg /= mk_n_reg then
                        sel_i_reg <= sel_i_reg + 1;
                    end if;
                    g_go_reg <= r_go;
                    if g_go_reg = '1' then
                        s_reg <= g_t_reg & "00";
                        from_reg <= g_f_reg & "00";
                        lead_reg <= g_lead_reg;
                        sel_i_reg <= g_i_reg + 1;
                        r_valid_reg <= '0';
                        g_go_reg <= '0';
                        state_reg <= S_HDR_c;
                    elsif sel_end = '1' then
                        state_reg <= S_IDLE_c;
                    end if;
                when S_HDR_c =>
                    k_reg <= '0' & from_reg(SEG_AW_c + LN_c - 1 downto LN_c);
                    fl_reg <= s_reg(PW_c - 1 downto 2);
                    fl_any_reg <= '1';
                    state_reg <= S_HDR2_c;
                when S_HDR2_c =>
                    -- The ULPDU_Length field, big-endian, in the word of s
                    -- (FPDUs start on words).
                    h_len_reg <= h_len;
                    state_reg <= S_HDR3_c;
                when S_HDR3_c =>
                    ulen_reg <= h_len_reg;
                    u_rem_reg <= h_len_reg;
                    -- Content words from the ULPDU_Length word through the
                    -- CRC word: (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
                    t_rem_reg <= t_rem0(16 downto 2);
                    first_reg <= '1';
                    avail_reg <= WORDS_W_c - s_w;
                    ulp_lo_reg <= unsigned'('0' & s_reg(LN_c - 1 downto 2) & "10");
                    room_reg <= NO_c - unsigned'('0' & s_reg(LN_c - 1 downto 2) & "10");
                    k_last_reg <= to_sl(k_reg = lastk_reg);
                    dist_reg <= ds_reg;
                    mkc_reg <= mk0_reg - k_reg(MW_c - 1 downto 0) - 1;
                    mkbad_reg <= '0';
                    vgot_reg <= '0';
                    fdone_reg <= '0';
                    state_reg <= S_HDR4_c;
                when S_HDR4_c =>
                    w_ends_reg <= to_sl(resize(avail_reg, 15) >= t_rem_reg);
                    crcw_reg <= s_w + t_rem_reg(WL_c - 1 downto 0) - 1;
                    u_fills_reg <= to_sl(u_rem_reg >= resize(room_reg, 16));
                    uh_reg <= ulp_lo_reg + u_rem_reg(OL_c - 1 downto 0);
                    thr_t0_reg <= resize(avail_reg, 7) + resize(WORDS_W_c, 7);
                    thr_t1_reg <= resize(avail_reg, 7) + resize(WORDS_W_c, 7) - 1;
                    thr_u0_reg <= resize(room_reg, OL_c + 2) + resize(NO_c, OL_c + 2);
                    thr_u1_reg <= resize(room_reg, OL_c + 2) + resize(NO_c, OL_c + 2) - FOUR_c;
                    wk_reg <= '1';
                    state_reg <= S_WALK_c;
                when S_WALK_c =>
                    if issue = '1' then
                        if w_last = '1' then
                            wk_reg <= '0';
                            end_reg <= w_end;
                            lb_n_reg <= "00";
                            state_reg <= S_VWAIT_c;
                        else
                            k_reg <= k_inc;
                            first_reg <= '0';
                            kmk_reg <= kmk_n;
                            if kmk_n = '1' then
                                mkc_reg <= to_unsigned(MKP_c - 1, MW_c);
                            else
                                mkc_reg <= mkc_reg - 1;
                            end if;
                            t_rem_reg <= t_rem_n;
                            avail_reg <= WORDS_W_c - as_u(kmk_n);
                            if kmk_n = '1' then
                                w_ends_reg <= le_t1;
                            else
                                w_ends_reg <= le_t0;
                            end if;
                            crcw_reg <= t_rem_reg(WL_c - 1 downto 0) - avail_reg + as_u(kmk_n) - 1;
                            thr_t0_reg <= W2_c - as_u(kmk_n);
                            thr_t1_reg <= W2_c - 1 - as_u(kmk_n);
                            if u_fills_reg = '1' then
                                u_rem_reg <= u_rem_d(15 downto 0);
                            else
                                u_rem_reg <= (others => '0');
                            end if;
                            ulp_lo_reg <= to_unsigned(4 * as_u(kmk_n), OL_c);
                            room_reg <= NO_c - 4 * as_u(kmk_n);
                            if kmk_n = '1' then
                                u_fills_reg <= u_fills_reg and ge_u1;
                            else
                                u_fills_reg <= u_fills_reg and ge_u0;
                            end if;
                            uh_reg <= to_unsigned(4 * as_u(kmk_n), OL_c) + u_low_n;
                            thr_u0_reg <= N2_c - 4 * as_u(kmk_n);
                            thr_u1_reg <= N2_c - FOUR_c - 4 * as_u(kmk_n);
                            k_last_reg <= to_sl(k_reg = lastkm1_reg);
                            dist_reg <= (dist_reg(PW_c - 1 downto LN_c) + 1) & dist_reg(LN_c - 1 downto 0);
                        end if;
                    end if;
                when S_VWAIT_c =>
                    if v_valid = '1' then
                        vgot_reg <= '1';
                        vgood_reg <= to_sl(v_code = "000");
                    end if;
                    if o_push = '1' and p_tlast = '1' then
                        fdone_reg <= '1';
                    end if;
                    if lb_n_reg /= 2 then
                        lb_n_reg <= lb_n_reg + 1;
                    end if;
                    if v_done = '1' then
                        if v_good = '1' then
                            o_cp_reg <= o_wp_reg;
                            cov_reg <= end_reg(PW_c - 1 downto 2);
                            if end_in_reg = '1' then
                                -- RFC 5044 6 case 3: the FPDU right behind this one.
                                s_reg <= next_s_reg;
                                from_reg <= end_reg;
                                lead_reg <= next_mk_reg;
                                state_reg <= S_HDR_c;
                            else
                                state_reg <= S_SEL_c;
                            end if;
                        else
                            o_wp_reg <= o_cp_reg;
                            state_reg <= S_SEL_c;
                        end if;
                    end if;
                when others =>
                    state_reg <= S_IDLE_c;
            end case;

            -- C: a command issued, or taken by the lane
            if l_take = '1' then
                c_valid_reg <= '0';
                mkbad_reg <= mkbad_reg or w_mkbad or c_abort_reg;
            end if;
            if issue = '1' then
                c_valid_reg <= '1';
                c_first_reg <= first_reg;
                c_last_reg <= w_last;
                c_abort_reg <= w_abort;
                c_lead_reg <= lead_reg;
                c_kmk_reg <= kmk_reg;
                c_dist_reg <= dist_reg;
                if first_reg = '1' then
                    c_crc_lo_reg <= resize(from_reg(LN_c - 1 downto 2), WL_c);
                else
                    c_crc_lo_reg <= (others => '0');
                end if;
                if w_ends_reg = '1' and w_abort = '0' then
                    c_crc_hi_reg <= crcw_reg;
                else
                    c_crc_hi_reg <= WORDS_W_c;
                end if;
                c_crcw_reg <= crcw_reg;
                c_ulp_lo_reg <= ulp_lo_reg;
                if u_fills_reg = '1' then
                    c_ulp_hi_reg <= NO_c;
                else
                    c_ulp_hi_reg <= uh_reg;
                end if;
            end if;

            -- discovery: D1..D4 (see "the candidates")
            d1_valid_reg <= disc_more;
            d1_p_reg <= mk_pos_reg(PW_c - 1 downto 2);
            d1_idx_reg <= mk_n_reg;
            d2_valid_reg <= d1_valid_reg;
            d2_idx_reg <= d1_idx_reg;
            d2_p_reg <= d1_p_reg;
            d2_z_reg <= to_sl(d1_q = 0);
            d2_u_reg <= d1_u(PWW_c downto 0);
            d2_t_reg <= d1_t(PWW_c downto 0);
            d3_valid_reg <= d2_valid_reg;
            d3_idx_reg <= d2_idx_reg;
            d3_p_reg <= d2_p_reg;
            d3_t_reg <= d2_tw;
            if d2_lead = '1' then
                d3_f_reg <= d2_uw;
            else
                d3_f_reg <= d2_tw;
            end if;
            d3_ok_reg <= d2_z_reg or not d2_t_reg(PWW_c);
            d3_onmk_reg <= to_sl(d2_tw(6 downto 0) = m0w_reg);
            d3_lead_reg <= d2_lead;
            d4_valid_reg <= d3_valid_reg;
            d4_idx_reg <= d3_idx_reg;
            d4_p_reg <= d3_p_reg;
            d4_t_reg <= d3_t_reg;
            d4_f_reg <= d3_f_reg;
            d4_ok_reg <= d3_ok_reg;
            d4_st_reg <= d3_ok_reg and (not d3_onmk_reg) and d3_fits and d3_fge;
            d4_lead_reg <= d3_lead_reg;
            if d4_valid_reg = '1' and d4_idx_reg < K_c then
                t_tab(to_integer(d4_idx_reg)) <= d4_t_reg;
                f_tab(to_integer(d4_idx_reg)) <= d4_f_reg;
                m_tab(to_integer(d4_idx_reg)) <= d4_p_reg;
                v_tab(to_integer(d4_idx_reg)) <= d4_ok_reg;
                s_tab(to_integer(d4_idx_reg)) <= d4_st_reg;
                l_tab(to_integer(d4_idx_reg)) <= d4_lead_reg;
            end if;

            -- selection: R and G (see "candidate selection"); sel_i_reg
            -- stays below K while it is looked at
            r_i_reg <= sel_i_reg;
            if sel_i_reg < K_c then
                r_t_reg <= t_tab(to_integer(sel_i_reg));
                r_f_reg <= f_tab(to_integer(sel_i_reg));
                r_st_reg <= s_tab(to_integer(sel_i_reg));
                r_lead_reg <= l_tab(to_integer(sel_i_reg));
            end if;
            g_i_reg <= r_i_reg;
            g_t_reg <= r_t_reg;
            g_f_reg <= r_f_reg;
            g_lead_reg <= r_lead_reg;

            -- after the walk: markers behind the FPDU pointing to it; the next FPDU
            for li in 0 to K_c - 1 loop
                lb_vec_reg(li) <= to_sl(li < to_integer(mk_n_reg) and v_tab(li) = '1'
                                        and t_tab(li) = s_reg(PW_c - 1 downto 2))
                                  and not gt33(end_reg(PW_c - 1 downto 2), m_tab(li));
            end loop;
            lb_reg <= or lb_vec_reg;
            next_mk_reg <= to_sl(is_mk(mb_reg, end_reg));
            -- A marker position is a multiple of N: + 4 carries nothing.
            if is_mk(mb_reg, end_reg) then
                next_s_reg <= end_reg or FOUR_PW_c;
            else
                next_s_reg <= end_reg;
            end if;
            end_in_reg <= gt33(e_reg, end_reg);

            -- per FPDU, from s and k (set up while the header is read)
            sq_sa_reg <= sum72a(resize(base_reg, 72), resize(s_reg, 72), '0');
            s_seq32 <= sq_sum(31 downto 0);
            ds_reg <= ds_sum(PW_c - 1 downto 0);

            -- per segment, from its settings and length (stable for the search)
            bs_sa_reg <= sum72a(resize(seq_reg, 72), not resize(a_reg, 72), '1');
            base_reg <= bs_sum(31 downto 0);
            e_reg <= e_sum(PW_c - 1 downto 0);
            el_reg <= el_sum(PW_c - 1 downto 0);
            lim_reg <= lim_sum(PW_c downto 0);
            if lim_reg(PW_c) = '1' then
                mk_cnt_reg <= (others => '0');
            else
                mk_cnt_reg <= lim_reg(KW_c + 8 downto 9) + 1;
            end if;
            w8_reg <= em8_sum(PW_c downto 2);
            aw_reg <= a_p3(LN_c downto 2);
            m0w_reg <= mk_first(8 downto 2);
            lastk_reg <= el_reg(SEG_AW_c + LN_c downto LN_c);
            lastkm1_reg <= elm_sum(SEG_AW_c + LN_c downto LN_c);
            e_w_reg <= e_lo(LN_c downto 2);
            mk0_reg <= mk_first(8 downto LN_c);

            if rst = '1' then
                state_reg <= S_IDLE_c;
                exc_mid_reg <= '0';
                m_skip_valid <= '0';
                d1_valid_reg <= '0';
                d2_valid_reg <= '0';
                d3_valid_reg <= '0';
                d4_valid_reg <= '0';
                r_valid_reg <= '0';
                g_go_reg <= '0';
                o_wp_reg <= (others => '0');
                o_cp_reg <= (others => '0');
                v_tab <= (others => '0');
                c_valid_reg <= '0';
                wk_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
