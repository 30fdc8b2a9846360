-- mpa_rx_align: the intake of the MPA receive path (mpa_rx). Takes TCP
-- segment payloads of many connections, decides per segment whether it
-- continues its connection's in-order stream, and hands the new octets on
-- as whole 32-bit words in stream-aligned beats; every other segment goes,
-- whole and untouched, to the exception stream with a reason code.
--
-- VHDL-2008 twin of hw/rtl/mpa_rx_align.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_rx/test_mpa_rx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- Stream alignment: octet s of a connection's stream (s = sequence number
-- minus the marker base, RFC 5044 4.3) sits in lane s mod N of output beat
-- s div N (N = DATA_W / 8), so FPDUs start on word boundaries and a marker
-- fills word 0 of a beat whose stream offset is a multiple of 512. Octets of
-- a word the segment does not complete (up to 3, the stash) are kept per
-- connection and completed by the next in-order segment.
--
-- Per-connection state (sdp_ram): en & mrk_en & crc_en & base mod 512 &
-- rcv_nxt & stash; an error bit in a second table, set through err_* and
-- cleared by configuring the connection.
--
-- Classification of [seq, seq+len) against rcv_nxt, in this order (mod
-- 2**32): 1 not enabled, 2 in error, 5 len = 0, 3 out of order (a hole
-- before it), 4 duplicate (nothing new), else accepted: the octets before
-- rcv_nxt are skipped and rcv_nxt becomes seq+len.
--
-- Input s_axis: one frame per segment, lane-0 aligned, ceil(len/N) beats;
-- tuser = conn & seq(31 downto 0) & len(15 downto 0), read on the first
-- beat; tkeep is not looked at. cfg_*: (re)starts a connection; cfg_ready
-- is high only between segments.
-- Output m_*: one beat per stream beat holding at least one new whole word:
-- words m_wlo .. m_whi-1 of m_data; m_mk: word 0 is a marker position
-- and in the beat (m_wlo = 0).
-- Exceptions m_exc_*: the frame as it came in, tuser = conn & seq & len &
-- reason(2 downto 0).
--
-- m_hint: high for the clock after an accepted segment's classification,
-- with m_hint_conn its connection (the delineator reads its tables ahead).
-- Lookahead: s_axis goes through a four-beat input FIFO; the tables are read
-- as a segment's first beat enters it, and a later write to the same
-- connection is kept beside the word read (the patch). The lookup's sums
-- are registered a clock ahead for each word the classification may use
-- (c_*). The segment is classified on the clock the one before takes its
-- last output beat (or its exception frame its last beat), or on an idle
-- clock, once those sums are in; one first beat at a time waits to be
-- classified.
--
-- Throughput: one output beat a clock, plus one per segment whose octets
-- straddle one more beat than they arrived in; a segment of one or two
-- beats costs up to two clocks more. Latency: 4 clocks.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_rx_align is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk           : in  std_logic := '0';
        rst           : in  std_logic := '0';

        cfg_valid     : in  std_logic := '0';
        cfg_ready     : out std_logic := '0';
        cfg_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_en        : in  std_logic := '0';
        cfg_mrk_en    : in  std_logic := '0';
        cfg_crc_en    : in  std_logic := '0';
        cfg_base      : in  std_logic_vector(31 downto 0) := (others => '0');

        err_valid     : in  std_logic := '0';
        err_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        s_axis_tdata  : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep  : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid : in  std_logic := '0';
        s_axis_tready : out std_logic := '0';
        s_axis_tlast  : in  std_logic := '0';
        s_axis_tuser  : in  std_logic_vector(CONN_W + 47 downto 0) := (others => '0');

        m_data        : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_valid       : out std_logic := '0';
        m_ready       : in  std_logic := '0';
        m_conn        : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_first       : out std_logic := '0';
        -- (first beats) the segment continues the connection of the beat
        -- before it on m_*: that beat ended the segment before, and this
        -- one goes on from its end (mpa_rx_walk walks the two as one)
        m_cont        : out std_logic := '0';
        m_last        : out std_logic := '0';
        m_wlo         : out std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        m_whi         : out std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        m_mk          : out std_logic := '0';
        m_mrk_en      : out std_logic := '0';
        m_crc_en      : out std_logic := '0';
        m_hint        : out std_logic := '0';
        m_hint_conn   : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        m_exc_tdata   : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_exc_tkeep   : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_exc_tvalid  : out std_logic := '0';
        m_exc_tready  : in  std_logic := '0';
        m_exc_tlast   : out std_logic := '0';
        m_exc_tuser   : out std_logic_vector(CONN_W + 50 downto 0) := (others => '0')
    );
end entity mpa_rx_align;

architecture rtl of mpa_rx_align is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_rx_align: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c     : positive := DATA_W / 8;
    constant LN_c    : positive := clog2(N_c);
    constant WORDS_c : positive := DATA_W / 32;
    constant WL_c    : positive := clog2(WORDS_c) + 1;     -- a word count 0 .. WORDS
    constant PH_W_c  : positive := 9 - LN_c;               -- beat index within a marker interval
    constant ST_W_c  : positive := 1 + 1 + 1 + 9 + 32 + 24;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype st_t is std_ulogic_vector(ST_W_c - 1 downto 0);
    subtype u18_t is unsigned(17 downto 0);
    subtype u32_t is unsigned(31 downto 0);
    subtype w_t is unsigned(WL_c - 1 downto 0);
    subtype state_t is std_ulogic_vector(2 downto 0);

    constant N18_c : u18_t := to_unsigned(N_c, 18);

    -- Widths of the sums made as a first beat comes in: len div N (lh), and
    -- seq's bits 17 .. LN.
    constant LHW_c : positive := 16 - LN_c;
    constant SHW_c : positive := 18 - LN_c;

    -- addc(a, b, ci): carry & sum of a + b + ci (the Verilog's rnic_add,
    -- a parallel prefix; the same values). a >= b is the carry out of
    -- a + not b + 1.
    function addc(a : unsigned; b : unsigned; ci : std_ulogic) return unsigned is
        variable c : unsigned(a'length downto 0) := (others => '0');
    begin
        c(0) := ci;
        return resize(a, a'length + 1) + resize(b, a'length + 1) + c;
    end function addc;

    -- S_IDLE: the input register holds the next segment's first beat (or
    -- nothing); its table word is ready and the clock classifies it.
    constant S_IDLE_c   : state_t := "000";
    constant S_STREAM_c : state_t := "010";
    constant S_EXC_c    : state_t := "011";

    signal state_reg : state_t := S_IDLE_c;

    -- --- tables ---
    -- st: en & mrk_en & crc_en & base(8 downto 0) & rcv_nxt(31 downto 0) & stash(23 downto 0)

    signal s_conn : conn_t := (others => '0');
    signal s_seq  : u32_t := (others => '0');
    signal s_len  : unsigned(15 downto 0) := (others => '0');

    -- --- input register and the lookahead ---
    signal in_valid    : std_ulogic := '0';     -- the FIFO's head
    signal in_data     : data_t := (others => '0');
    signal in_keep     : std_ulogic_vector(N_c - 1 downto 0) := (others => '0');
    signal in_last     : std_ulogic := '0';
    signal in1_valid   : std_ulogic := '0';     -- the beats behind it
    signal in1_data    : data_t := (others => '0');
    signal in1_keep    : std_ulogic_vector(N_c - 1 downto 0) := (others => '0');
    signal in1_last    : std_ulogic := '0';
    signal in2_valid   : std_ulogic := '0';
    signal in2_data    : data_t := (others => '0');
    signal in2_keep    : std_ulogic_vector(N_c - 1 downto 0) := (others => '0');
    signal in2_last    : std_ulogic := '0';
    signal in3_valid   : std_ulogic := '0';
    signal in3_data    : data_t := (others => '0');
    signal in3_keep    : std_ulogic_vector(N_c - 1 downto 0) := (others => '0');
    signal in3_last    : std_ulogic := '0';
    signal o0, o1, o2  : std_ulogic := '0';     -- slots still full after this clock's take
    signal in_take, exc_done : std_ulogic := '0';
    signal s_first_reg : std_ulogic := '1';     -- the next s_axis beat starts a segment
    signal hd_pend     : std_ulogic := '0';     -- a first beat in the FIFO waits to be classified
    signal hd_same     : std_ulogic := '0';     -- ... of the connection of the segment streaming,
                                                 -- while it streams (cleared as it ends)
    signal hd_rdy      : std_ulogic := '0';     -- ... and came in before the last edge (see c_*)
    signal s_ready_i, s_fire : std_ulogic := '0';
    -- the segment whose first beat is (or was) in the input register
    signal hd_conn : conn_t := (others => '0');
    signal hd_seq, hd_end : u32_t := (others => '0');
    signal hd_len  : unsigned(15 downto 0) := (others => '0');
    -- Worked out from s_axis_tuser as the first beat comes in, for the sums
    -- on the table words: len's beats (lh = len div N) plus 1 and 2 (with
    -- their carries), whether lh is 0 or 1, len mod N not 0, len 0, (seq div
    -- N) - 1 (18 bits), and (len mod N) + (seq mod N).
    signal hd_lhp1, hd_lhp2 : unsigned(LHW_c downto 0) := (others => '0');
    signal hd_lh0, hd_lh1, hd_llnz, hd_len0 : std_ulogic := '0';
    signal hd_shm1 : unsigned(SHW_c - 1 downto 0) := (others => '0');
    signal hd_llsl : unsigned(LN_c downto 0) := (others => '0');

    signal cfg_ready_i, cfg_fire, look_start, classify : std_ulogic := '0';
    signal seg_join, load_seg : std_ulogic := '0';  -- the next segment is joined to this one (see "Joining")
    signal nxt_joins : std_ulogic := '0';           -- ... may be joined (either form)
    signal seg_join_last, any_join : std_ulogic := '0';  -- ... on its last beat, which the two share
    signal m_hint_reg : std_ulogic := '0';

    -- the patch: the newest write to the looked-up connection since its read
    signal st_pv, err_pv, err_patch : std_ulogic := '0';
    signal pt_stale_reg : std_ulogic := '0';    -- the patch was written at the last edge
    signal st_patch : st_t := (others => '0');
    signal st_pt, err_pt : std_ulogic := '0';
    signal st_now, st_fw, st_cls : st_t := (others => '0');
    signal err_now, fw_same : std_ulogic := '0';

    signal st_wr_en   : std_ulogic := '0';
    signal st_wr_data : st_t := (others => '0');
    signal st_wr_addr : conn_t := (others => '0');
    signal st_rd      : std_logic_vector(ST_W_c - 1 downto 0) := (others => '0');

    signal err_wr_en   : std_ulogic := '0';
    signal err_wr_addr : conn_t := (others => '0');
    signal err_wr_data : std_ulogic_vector(0 downto 0) := (others => '0');
    signal err_rd      : std_logic_vector(0 downto 0) := (others => '0');

    -- --- segment registers ---

    signal conn_reg     : conn_t := (others => '0');
    signal seq_reg      : u32_t := (others => '0');
    signal len_reg      : unsigned(15 downto 0) := (others => '0');
    signal reason_reg   : unsigned(2 downto 0) := (others => '0');
    signal mrk_reg      : std_ulogic := '0';
    signal crc_reg      : std_ulogic := '0';
    signal base_reg     : unsigned(8 downto 0) := (others => '0');
    signal end_reg      : u32_t := (others => '0');             -- seq + len
    signal stash_reg    : std_ulogic_vector(23 downto 0) := (others => '0');
    signal stash_n_reg  : unsigned(1 downto 0) := (others => '0');  -- stash octets, (rcv_nxt - base) mod 4
    signal rot_reg      : unsigned(LN_c - 1 downto 0) := (others => '0');  -- (seq - base) mod N
    signal lo_rem_reg   : u18_t := (others => '0');             -- octets from this beat to lo
    signal hi_rem_reg   : u18_t := (others => '0');             -- and to hi
    signal in_left_reg  : u18_t := (others => '0');             -- input beats still to take
    signal out_left_reg : u18_t := (others => '0');             -- output beats still to make
    signal need_in_reg  : std_ulogic := '0';                     -- in_left_reg /= 0
    signal final_reg    : std_ulogic := '0';                     -- out_left_reg = 1
    signal phase_reg    : unsigned(PH_W_c - 1 downto 0) := (others => '0');  -- beat index mod 512/N
    signal emitted_reg  : std_ulogic := '0';
    signal prev_rot_reg : data_t := (others => '0');
    signal xtra_reg     : std_ulogic := '0';                     -- one output beat more than input beats
    signal pen_reg      : std_ulogic := '0';                     -- the next step takes the last input beat,
                                                                 -- a beat without input follows, lo is at
                                                                 -- or before it
    signal fin_ok_reg   : std_ulogic := '0';                     -- the next step is the last, takes input,
                                                                 -- holds a whole word and less than a
                                                                 -- beat, and lo is before it

    -- --- output registers ---

    signal m_data_reg   : data_t := (others => '0');
    signal m_valid_reg  : std_ulogic := '0';
    signal m_conn_reg   : conn_t := (others => '0');
    signal m_first_reg  : std_ulogic := '0';
    signal m_cont_reg   : std_ulogic := '0';
    signal em_ok_reg    : std_ulogic := '0';  -- m_conn is the last beat's (none since reset or cfg: no)
    signal m_last_reg   : std_ulogic := '0';
    signal m_wlo_reg    : w_t := (others => '0');
    signal m_whi_reg    : w_t := (others => '0');
    signal m_mk_reg     : std_ulogic := '0';
    signal m_mrk_en_reg : std_ulogic := '0';
    signal m_crc_en_reg : std_ulogic := '0';

    -- --- lookup ---

    signal st_en, st_mrk, st_crc : std_ulogic := '0';
    signal st_base  : unsigned(8 downto 0) := (others => '0');
    signal st_stash : std_ulogic_vector(23 downto 0) := (others => '0');
    -- the lookup's sums for each candidate word (0 the one being written,
    -- 1 the patch, 2 the RAM's), and the one picked (csel)
    type st_arr_t is array (0 to 2) of st_t;
    type rot_arr_t is array (0 to 2) of unsigned(LN_c - 1 downto 0);
    type ph_arr_t is array (0 to 2) of unsigned(PH_W_c - 1 downto 0);
    type nn_arr_t is array (0 to 2) of unsigned(1 downto 0);
    type u18_arr_t is array (0 to 2) of u18_t;
    signal c_word   : st_arr_t := (others => (others => '0'));
    signal c_ooo, c_nw, c_ob1, c_xt, c_hw : std_ulogic_vector(2 downto 0) := (others => '0');
    signal c_ex0    : std_ulogic := '0';                     -- seq is the segment before's end (source 0)
    signal c_rot    : rot_arr_t := (others => (others => '0'));
    signal c_ph     : ph_arr_t := (others => (others => '0'));
    signal c_nn     : nn_arr_t := (others => (others => '0'));
    signal c_lo, c_hi, c_ob : u18_arr_t := (others => (others => '0'));
    signal csel     : natural range 0 to 2 := 0;
    signal pt_wait  : std_ulogic := '0';                     -- the patch's sums are not in yet
    signal is_ooo, is_dup : std_ulogic := '0';
    signal rot      : unsigned(LN_c - 1 downto 0) := (others => '0');
    signal look_reason : unsigned(2 downto 0) := (others => '0');
    signal nxt_n    : unsigned(1 downto 0) := (others => '0');
    signal out_beats, in_beats : u18_t := (others => '0');

    -- --- streaming ---

    signal out_adv, need_in, step : std_ulogic := '0';
    signal rot_in   : data_t := (others => '0');
    signal lo_here  : std_ulogic := '0';
    signal merged   : data_t := (others => '0');
    signal last_beat : data_t := (others => '0');             -- merged without the stash
    signal stash_new : std_ulogic_vector(23 downto 0) := (others => '0');
    signal wlo, whi : w_t := (others => '0');
    signal emit, final_beat, seg_done : std_ulogic := '0';

begin

    m_data <= m_data_reg;
    m_valid <= m_valid_reg;
    m_conn <= m_conn_reg;
    m_first <= m_first_reg;
    m_cont <= m_cont_reg;
    m_last <= m_last_reg;
    m_wlo <= std_ulogic_vector(m_wlo_reg);
    m_whi <= std_ulogic_vector(m_whi_reg);
    m_mk <= m_mk_reg;
    m_mrk_en <= m_mrk_en_reg;
    m_crc_en <= m_crc_en_reg;
    m_hint <= m_hint_reg;
    m_hint_conn <= conn_reg;

    -- --- tables ------------------------------------------------------------------

    s_conn <= s_axis_tuser(CONN_W + 47 downto 48);
    s_seq <= unsigned(s_axis_tuser(47 downto 16));
    s_len <= unsigned(s_axis_tuser(15 downto 0));

    s_fire <= s_axis_tvalid and s_ready_i;
    look_start <= s_fire and s_first_reg;           -- read the tables for it

    cfg_fire <= cfg_valid and cfg_ready_i;

    st_ram : entity work.sdp_ram
        generic map (WIDTH => ST_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => st_wr_en, wr_addr => st_wr_addr, wr_data => st_wr_data,
            rd_en => look_start, rd_addr => s_conn, rd_data => st_rd
        );

    err_wr_en <= err_valid or cfg_fire;
    err_wr_addr <= err_conn when err_valid = '1' else cfg_conn;
    err_wr_data(0) <= err_valid;

    err_ram : entity work.sdp_ram
        generic map (WIDTH => 1, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => err_wr_en, wr_addr => err_wr_addr, wr_data => err_wr_data,
            rd_en => look_start, rd_addr => s_conn, rd_data => err_rd
        );

    -- The patch (a read and a write at one edge return the old word).
    -- (Compared with both candidates, then chosen: look_start comes late.)
    st_pt <= to_sl(st_wr_addr = s_conn) when look_start = '1' else to_sl(st_wr_addr = hd_conn);
    err_pt <= to_sl(err_wr_addr = s_conn) when look_start = '1' else to_sl(err_wr_addr = hd_conn);

    p_patch : process (clk) is
    begin
        if rising_edge(clk) then
            if look_start = '1' then
                st_pv <= '0';
                err_pv <= '0';
            end if;
            pt_stale_reg <= st_wr_en and st_pt;
            if st_wr_en = '1' and st_pt = '1' then
                st_pv <= '1';
                st_patch <= st_wr_data;
            end if;
            if err_wr_en = '1' and err_pt = '1' then
                err_pv <= '1';
                err_patch <= err_valid;
            end if;
        end if;
    end process p_patch;

    st_now <= st_patch when st_pv = '1' else st_t(st_rd);
    err_now <= err_patch when err_pv = '1' else err_rd(0);
    -- A segment is also classified on the clock of the segment before's
    -- last output beat, with the word that beat writes for the same
    -- connection.
    st_cls <= st_fw when fw_same = '1' else st_now;

    -- cfg writes only between segments, and not when an error is being set
    -- (the error table has one write port).
    cfg_ready_i <= to_sl(state_reg = S_IDLE_c) and not err_valid;
    cfg_ready <= cfg_ready_i;

    -- --- lookup: classify ------------------------------------------------------------

    st_en <= st_cls(ST_W_c - 1);
    st_mrk <= st_cls(ST_W_c - 2);
    st_crc <= st_cls(ST_W_c - 3);
    st_base <= unsigned(st_cls(ST_W_c - 4 downto ST_W_c - 12));
    st_stash <= st_cls(23 downto 0);

    -- The lookup's sums, c_*: worked out a clock ahead, into registers (every
    -- clock), for each word the classification may use: the one the segment
    -- before writes as it ends (its registers: 0), the patch (1) and the
    -- RAM's (2). They hold from the second edge after the segment's first
    -- beat came in (hd_rdy), and, for the patch, from the second edge after
    -- its last write (pt_stale_reg); the classification waits for that.
    --   ooo  a hole before the segment: seq after rcv_nxt
    --   nw   something new: seq + len after rcv_nxt (else a duplicate)
    --   rot  (seq - base) mod N; ph, (seq - base) mod 512 div N
    --   nn   the stash's octets, (rcv_nxt - base) mod 4
    --   lo   octets from the first beat to the first new one, rounded down
    --        to a word: rcv_nxt - f, f the stream beat's start at or below
    --        seq ({seq div N, base mod N} or one beat lower), mod 2**18
    --   hi   octets from the first beat to the segment's end, rounded down
    --        to a word: len + rot
    --   ob   output beats, ceil((len + rot) / N); ob1: ob is 1
    c_word(0) <= '1' & mrk_reg & crc_reg & std_ulogic_vector(base_reg) & std_ulogic_vector(end_reg) & x"000000";
    c_word(1) <= st_patch;
    c_word(2) <= st_t(st_rd);

    p_cw : process (clk) is
        variable nxt : u32_t;
        variable base : unsigned(8 downto 0);
        variable ge_sn, ge_ns, ge_en, ge_ne : std_ulogic;
        variable off9 : unsigned(9 downto 0);
        variable rt, hlo : unsigned(LN_c downto 0);
        variable bs, ge_y, cy, hnz : std_ulogic;
        variable lo0, lo1 : unsigned(18 downto 0);
        variable lh : unsigned(LHW_c downto 0);
    begin
        if rising_edge(clk) then
            for g in 0 to 2 loop
                nxt := unsigned(c_word(g)(55 downto 24));
                base := unsigned(c_word(g)(ST_W_c - 4 downto ST_W_c - 12));
                -- Whether seq, and seq + len, come after rcv_nxt: the low 31
                -- bits' a >= b both ways (the carries out of a + not b + 1).
                ge_sn := addc(hd_seq(30 downto 0), not nxt(30 downto 0), '1')(31);
                ge_ns := addc(nxt(30 downto 0), not hd_seq(30 downto 0), '1')(31);
                ge_en := addc(hd_end(30 downto 0), not nxt(30 downto 0), '1')(31);
                ge_ne := addc(nxt(30 downto 0), not hd_end(30 downto 0), '1')(31);
                -- (seq - base) mod 512, and mod N (rot; bs: seq mod N < base mod N)
                off9 := addc(hd_seq(8 downto 0), not base, '1');
                rt := addc(hd_seq(LN_c - 1 downto 0), not base(LN_c - 1 downto 0), '1');
                bs := not rt(LN_c);
                -- len + rot = y - (base mod N) + (bs ? N : 0), y = hd_llsl: it
                -- reaches N (cy) when y >= base mod N (bs), or y >= N + base mod N.
                hlo := addc(hd_llsl(LN_c - 1 downto 0), not base(LN_c - 1 downto 0), '1');
                ge_y := hlo(LN_c);                   -- y mod N >= base mod N
                if bs = '1' then
                    cy := hd_llsl(LN_c) or ge_y;
                else
                    cy := hd_llsl(LN_c) and ge_y;
                end if;
                hnz := to_sl(hd_llsl(LN_c - 1 downto 0) /= base(LN_c - 1 downto 0));
                -- rcv_nxt - f, f = {seq div N, base mod N} (bs: one beat lower)
                lo0 := addc(nxt(17 downto 0), not (hd_seq(17 downto LN_c) & base(LN_c - 1 downto 0)), '1');
                lo1 := addc(nxt(17 downto 0), not (hd_shm1 & base(LN_c - 1 downto 0)), '1');
                if hd_seq(31) = nxt(31) then
                    c_ooo(g) <= not ge_ns;
                else
                    c_ooo(g) <= not ge_sn;
                end if;
                if hd_end(31) = nxt(31) then
                    c_nw(g) <= not ge_ne;
                else
                    c_nw(g) <= not ge_en;
                end if;
                c_rot(g) <= rt(LN_c - 1 downto 0);
                c_ph(g) <= off9(8 downto LN_c);
                c_nn(g) <= nxt(1 downto 0) - base(1 downto 0);
                if bs = '1' then
                    c_lo(g) <= lo1(17 downto 2) & "00";
                else
                    c_lo(g) <= lo0(17 downto 2) & "00";
                end if;
                if cy = '1' then
                    lh := hd_lhp1;
                else
                    lh := '0' & hd_len(15 downto LN_c);
                end if;
                c_hi(g) <= '0' & lh & hlo(LN_c - 1 downto 2) & "00";
                if cy = '1' and hnz = '1' then
                    c_ob(g) <= resize(hd_lhp2, 18);
                elsif cy = '1' or hnz = '1' then
                    c_ob(g) <= resize(hd_lhp1, 18);
                else
                    c_ob(g) <= resize(hd_len(15 downto LN_c), 18);
                end if;
                if hd_lh0 = '1' then
                    c_ob1(g) <= cy xor hnz;
                else
                    c_ob1(g) <= hd_lh1 and not cy and not hnz;
                end if;
                -- one output beat more than input beats (ob against in_beats)
                c_xt(g) <= (cy and hnz) or ((cy xor hnz) and not hd_llnz);
                -- a whole word in the first output beat (hi >= 4)
                c_hw(g) <= to_sl(lh /= 0) or to_sl(hlo(LN_c - 1 downto 2) /= 0);
            end loop;
            c_ex0 <= to_sl(hd_seq = end_reg);
        end if;
    end process p_cw;

    -- The word the classification uses: 0 the one being written, 1 the
    -- patch, 2 the RAM's.
    csel <= 0 when fw_same = '1' else 1 when st_pv = '1' else 2;
    is_ooo <= c_ooo(csel);
    is_dup <= not c_nw(csel);
    rot <= c_rot(csel);
    look_reason <= to_unsigned(1, 3) when st_en = '0' else
                   to_unsigned(2, 3) when err_now = '1' else
                   to_unsigned(5, 3) when hd_len0 = '1' else
                   to_unsigned(3, 3) when is_ooo = '1' else
                   to_unsigned(4, 3) when is_dup = '1' else
                   to_unsigned(0, 3);
    nxt_n <= c_nn(csel);
    out_beats <= c_ob(csel);                         -- beats the octets straddle
    in_beats <= resize(hd_lhp1, 18) when hd_llnz = '1'
                else resize(hd_len(15 downto LN_c), 18);   -- beats the segment arrives in

    -- --- streaming: one output beat a clock ------------------------------------------

    out_adv <= (not m_valid_reg) or m_ready;
    need_in <= need_in_reg;
    step <= to_sl(state_reg = S_STREAM_c) and out_adv and ((not need_in) or in_valid);

    -- The input beat rotated up by rot lanes (the Verilog builds it as a
    -- mux tree over rot of the lanes in rotated order).
    rot_in <= std_ulogic_vector(rotate_left(unsigned(in_data), 8 * to_integer(rot_reg)))
              when need_in = '1' else (others => '0');

    -- Word range of this beat, the stash merged into the word at lo, and the
    -- stash after the segment (the octets of the word at hi).
    lo_here <= not lo_rem_reg(17) and to_sl(lo_rem_reg < N18_c);
    wlo <= (others => '0') when lo_rem_reg(17) = '1' or lo_rem_reg = 0 else
           to_unsigned(WORDS_c, WL_c) when lo_rem_reg >= N18_c else
           lo_rem_reg(WL_c + 1 downto 2);
    whi <= (others => '0') when hi_rem_reg(17) = '1' or hi_rem_reg < 4 else
           to_unsigned(WORDS_c, WL_c) when hi_rem_reg >= N18_c else
           hi_rem_reg(WL_c + 1 downto 2);

    p_merged : process (all) is
        variable stashed, carried : boolean;
    begin
        for g in 0 to N_c - 1 loop
            if g mod 4 = 3 then
                stashed := false;
            else
                stashed := lo_here = '1'
                           and lo_rem_reg(LN_c - 1 downto 2) = to_unsigned(g / 4, LN_c - 2)
                           and stash_n_reg > to_unsigned(g mod 4, 2);
            end if;
            if g = N_c - 1 then
                carried := false;
            else
                carried := rot_reg > to_unsigned(g, LN_c);
            end if;
            if stashed then
                merged(8 * g + 7 downto 8 * g) <= stash_reg(8 * (g mod 4) + 7 downto 8 * (g mod 4));
            elsif carried then
                merged(8 * g + 7 downto 8 * g) <= prev_rot_reg(8 * g + 7 downto 8 * g);
            else
                merged(8 * g + 7 downto 8 * g) <= rot_in(8 * g + 7 downto 8 * g);
            end if;
            if carried then
                last_beat(8 * g + 7 downto 8 * g) <= prev_rot_reg(8 * g + 7 downto 8 * g);
            else
                last_beat(8 * g + 7 downto 8 * g) <= rot_in(8 * g + 7 downto 8 * g);
            end if;
        end loop;
    end process p_merged;

    p_stash_new : process (all) is
        variable k : natural;
    begin
        k := to_integer(hi_rem_reg(LN_c - 1 downto 2));
        for g in 0 to 2 loop
            stash_new(8 * g + 7 downto 8 * g) <= merged(32 * k + 8 * g + 7 downto 32 * k + 8 * g);
        end loop;
    end process p_stash_new;

    emit <= to_sl(whi > wlo);
    final_beat <= final_reg;

    -- --- exceptions: the frame passes through -------------------------------------------

    m_exc_tdata <= in_data;
    m_exc_tkeep <= in_keep;
    m_exc_tlast <= in_last;
    m_exc_tvalid <= to_sl(state_reg = S_EXC_c) and in_valid;
    m_exc_tuser <= conn_reg & std_ulogic_vector(seq_reg) & std_ulogic_vector(len_reg)
                   & std_ulogic_vector(reason_reg);

    exc_done <= to_sl(state_reg = S_EXC_c) and in_valid and m_exc_tready and in_last;
    in_take <= (to_sl(state_reg = S_EXC_c) and in_valid and m_exc_tready) or (step and need_in);
    -- Four beats of input FIFO, taken while fewer than four are in:
    -- s_axis_tready comes from registers, and a segment's first beat comes
    -- in far enough ahead of the one before's end for its lookup (two
    -- clocks, c_*) to be done by then in back-to-back streaming.
    s_ready_i <= not in3_valid and not (s_first_reg and hd_pend);
    s_axis_tready <= s_ready_i;
    -- The FIFO's slots still full after this clock's take; a beat coming in
    -- goes into the first free one.
    o0 <= in1_valid when in_take = '1' else in_valid;
    o1 <= in2_valid when in_take = '1' else in1_valid;
    o2 <= in3_valid when in_take = '1' else in2_valid;

    p_in : process (clk) is
    begin
        if rising_edge(clk) then
            if in_take = '1' then
                in_valid <= in1_valid;
                in_data <= in1_data;
                in_keep <= in1_keep;
                in_last <= in1_last;
                in1_valid <= in2_valid;
                in1_data <= in2_data;
                in1_keep <= in2_keep;
                in1_last <= in2_last;
                in2_valid <= in3_valid;
                in2_data <= in3_data;
                in2_keep <= in3_keep;
                in2_last <= in3_last;
                in3_valid <= '0';
            end if;
            if s_fire = '1' then
                if o0 = '0' then
                    in_valid <= '1';
                    in_data <= s_axis_tdata;
                    in_keep <= s_axis_tkeep;
                    in_last <= s_axis_tlast;
                elsif o1 = '0' then
                    in1_valid <= '1';
                    in1_data <= s_axis_tdata;
                    in1_keep <= s_axis_tkeep;
                    in1_last <= s_axis_tlast;
                elsif o2 = '0' then
                    in2_valid <= '1';
                    in2_data <= s_axis_tdata;
                    in2_keep <= s_axis_tkeep;
                    in2_last <= s_axis_tlast;
                else
                    in3_valid <= '1';
                    in3_data <= s_axis_tdata;
                    in3_keep <= s_axis_tkeep;
                    in3_last <= s_axis_tlast;
                end if;
                s_first_reg <= s_axis_tlast;
            end if;
            hd_rdy <= not look_start;
            if seg_done = '1' then
                hd_same <= '0';
            end if;
            if look_start = '1' then
                hd_pend <= '1';
                -- (look_start never meets classify: conn_reg is the segment's.)
                hd_same <= to_sl(s_conn = conn_reg) and to_sl(state_reg = S_STREAM_c) and not seg_done;
                hd_conn <= s_conn;
                hd_seq <= s_seq;
                hd_len <= s_len;
                hd_end <= addc(s_seq, resize(s_len, 32), '0')(31 downto 0);
                hd_lhp1 <= addc(s_len(15 downto LN_c), to_unsigned(0, LHW_c), '1');
                hd_lhp2 <= addc(s_len(15 downto LN_c), to_unsigned(1, LHW_c), '1');
                hd_llsl <= addc(s_len(LN_c - 1 downto 0), s_seq(LN_c - 1 downto 0), '0');
                hd_lh0 <= to_sl(s_len(15 downto LN_c) = 0);
                hd_lh1 <= to_sl(s_len(15 downto LN_c) = 1);
                hd_llnz <= to_sl(s_len(LN_c - 1 downto 0) /= 0);
                hd_len0 <= to_sl(s_len = 0);
                hd_shm1 <= addc(s_seq(17 downto LN_c), (SHW_c - 1 downto 0 => '1'), '0')(SHW_c - 1 downto 0);
            end if;
            if load_seg = '1' then
                hd_pend <= '0';
            end if;
            if rst = '1' then
                in_valid <= '0';
                in1_valid <= '0';
                in2_valid <= '0';
                in3_valid <= '0';
                hd_pend <= '0';
                s_first_reg <= '1';
            end if;
        end if;
    end process p_in;

    -- --- registers ---------------------------------------------------------------------

    -- The table is written at the edge that ends a cfg transfer or a
    -- segment's last output beat (never both: cfg_ready is low while a
    -- segment streams); the patch carries it to a lookup already made.
    seg_done <= step and final_beat;
    st_fw <= '1' & mrk_reg & crc_reg & std_ulogic_vector(base_reg) & std_ulogic_vector(end_reg) & stash_new;
    st_wr_en <= cfg_fire or seg_done;
    st_wr_addr <= cfg_conn when cfg_fire = '1' else conn_reg;
    st_wr_data <= cfg_en & cfg_mrk_en & cfg_crc_en & cfg_base(8 downto 0) & cfg_base & x"000000"
                  when cfg_fire = '1' else st_fw;
    fw_same <= hd_same;
    pt_wait <= pt_stale_reg and not fw_same and st_pv;
    classify <= hd_pend and hd_rdy and not pt_wait and not cfg_valid
                and (to_sl(state_reg = S_IDLE_c) or seg_done or exc_done);
    -- Joining: on the clock the segment streaming takes its last input beat
    -- with a beat without input to follow (pen_reg), the next segment, when
    -- it is of the same connection (classified with the word this one
    -- writes), starts exactly at this one's end, is accepted and has a
    -- whole word in the stream beat the two share, takes the place of that
    -- beat: its first output beat is the shared one, this one's octets
    -- (prev_rot_reg: its last input beat, rotated) below its own, with no
    -- segment end between them on m_* and no table write for this one (the
    -- next one's, as it ends, covers both). nxt_joins: the next segment may
    -- be joined (both forms).
    nxt_joins <= hd_pend and hd_rdy and fw_same and not cfg_valid
                 and c_ex0 and c_hw(0) and not hd_len0 and not err_now;
    seg_join <= step and pen_reg and nxt_joins;
    -- A segment that ends inside a stream beat it took input for (no
    -- carried beat: fin_ok_reg) hands the next one, under the same
    -- conditions, that beat instead of its last output beat: the next one
    -- is classified as usual on that clock, the beat (last_beat: merged,
    -- without the stash, which is in an earlier beat) goes to prev_rot_reg
    -- and not out, and the next one's first output beat is it, with its own
    -- octets from the end's lane.
    seg_join_last <= step and final_beat and fin_ok_reg and nxt_joins;
    load_seg <= classify or seg_join;               -- (seg_join_last is a classify)
    any_join <= seg_join or seg_join_last;

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if m_valid_reg = '1' and m_ready = '1' then
                m_valid_reg <= '0';
            end if;
            m_hint_reg <= classify and to_sl(look_reason = 0) and not seg_join_last;

            case state_reg is
                when S_STREAM_c =>
                    if step = '1' then
                        if need_in = '1' then
                            in_left_reg <= in_left_reg - 1;
                            need_in_reg <= to_sl(in_left_reg /= 1);
                        end if;
                        pen_reg <= need_in and xtra_reg and to_sl(in_left_reg = 2)
                                   and (lo_rem_reg(17) or to_sl(lo_rem_reg(17 downto LN_c + 1) = 0));
                        fin_ok_reg <= to_sl(out_left_reg = 2) and not xtra_reg
                                      and to_sl(hi_rem_reg(17 downto LN_c) = 1)
                                      and to_sl(hi_rem_reg(LN_c - 1 downto 2) /= 0)
                                      and (lo_rem_reg(17) or to_sl(lo_rem_reg(17 downto LN_c) = 0));
                        out_left_reg <= out_left_reg - 1;
                        final_reg <= to_sl(out_left_reg = 2);
                        prev_rot_reg <= rot_in;
                        lo_rem_reg <= lo_rem_reg - N18_c;
                        hi_rem_reg <= hi_rem_reg - N18_c;
                        phase_reg <= phase_reg + 1;
                        if emit = '1' and seg_join_last = '0' then
                            m_valid_reg <= '1';
                            m_data_reg <= merged;
                            m_conn_reg <= conn_reg;
                            m_first_reg <= not emitted_reg;
                            m_cont_reg <= not emitted_reg and em_ok_reg and to_sl(conn_reg = m_conn_reg);
                            em_ok_reg <= '1';
                            m_last_reg <= to_sl(hi_rem_reg <= N18_c) and not seg_join;
                            m_wlo_reg <= wlo;
                            m_whi_reg <= whi;
                            m_mk_reg <= mrk_reg and to_sl(phase_reg = 0) and to_sl(wlo = 0);
                            m_mrk_en_reg <= mrk_reg;
                            m_crc_en_reg <= crc_reg;
                            emitted_reg <= '1';
                        end if;
                        if final_beat = '1' then
                            state_reg <= S_IDLE_c;
                        end if;
                    end if;
                when S_EXC_c =>
                    if in_valid = '1' and m_exc_tready = '1' and in_last = '1' then
                        state_reg <= S_IDLE_c;
                    end if;
                when others =>
                    state_reg <= S_IDLE_c;
            end case;

            -- The next segment (after the case: its registers win over the
            -- last beat's updates of the segment before).
            if load_seg = '1' then
                conn_reg <= hd_conn;
                seq_reg <= hd_seq;
                len_reg <= hd_len;
                end_reg <= hd_end;
                reason_reg <= look_reason;
                mrk_reg <= st_mrk;
                crc_reg <= st_crc;
                base_reg <= st_base;
                stash_reg <= st_stash;
                if seg_join = '1' then
                    stash_n_reg <= (others => '0');
                    prev_rot_reg <= rot_in;
                elsif seg_join_last = '1' then
                    stash_n_reg <= (others => '0');
                    prev_rot_reg <= last_beat;
                else
                    stash_n_reg <= nxt_n;
                    prev_rot_reg <= (others => '0');
                end if;
                rot_reg <= rot;
                -- Word boundaries: lo rounds down to the stash's word, hi
                -- down to the last whole word.
                if any_join = '1' then
                    lo_rem_reg <= (others => '0');
                else
                    lo_rem_reg <= c_lo(csel);
                end if;
                hi_rem_reg <= c_hi(csel);
                in_left_reg <= in_beats;
                out_left_reg <= out_beats;
                need_in_reg <= not hd_len0;
                final_reg <= c_ob1(csel);
                phase_reg <= c_ph(csel);
                emitted_reg <= any_join;
                xtra_reg <= c_xt(csel);
                pen_reg <= '0';
                fin_ok_reg <= '0';
                if look_reason = 0 then
                    state_reg <= S_STREAM_c;
                else
                    state_reg <= S_EXC_c;
                end if;
            end if;

            if cfg_fire = '1' then
                em_ok_reg <= '0';
            end if;
            if rst = '1' then
                state_reg <= S_IDLE_c;
                m_valid_reg <= '0';
                m_hint_reg <= '0';
                em_ok_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
