-- crc32c: CRC32c (Castagnoli) of an AXI4-Stream, DATA_W bits per clock,
-- resumable across segments with the state kept outside the block.
--
-- VHDL-2008 twin of hw/rtl/crc32c.v: same generics, same ports, same
-- pipeline register for register, so one cocotb testbench
-- (tests/crc/test_crc32c.py) drives both and the same clock counts hold.
--
-- The CRC is the one MPA carries in every FPDU (RFC 5044 4.4) and iSCSI in
-- its digests (RFC 3720 B.4): reflected polynomial 0x82F63B78, initial value
-- and final XOR 0xFFFFFFFF, as iwarp/crc32c's Checksum and Update compute it.
-- Markers, pad and headers are plain data to this block.
--
-- Input, s_axis; a segment is the run of beats up to and including tlast:
--   tdata   octet k in tdata(8k+7 downto 8k), octet 0 first in the stream.
--   tkeep   one bit per octet. A segment's valid octets form one contiguous
--           run: null octets may lead (low tkeep bits in its first beats)
--           and trail (in its last beats), never sit in between. The run
--           may be a single octet or empty (an empty segment returns its
--           starting state). Any other tkeep pattern gives an undefined CRC.
--   tlast   ends the segment; one result per segment.
--   tid     ID_W bits (e.g. a connection number), sampled with tlast and
--           returned with the result.
--   tuser   state(31 downto 0) & init, sampled with a segment's first beat
--           (the beat after reset or after a tlast beat), ignored on the
--           others. init = '1' starts a new CRC; init = '0' resumes from
--           state, a result returned earlier (or the value iwarp/crc32c's
--           Update starts from). The state is the CRC32c of the octets so
--           far, final XOR included, so a 32-bit table entry per connection
--           is all the context there is.
--   tready  registered; high while fewer than 8 results (OUT_DEPTH_c) are in
--           flight or waiting on m_axis_crc, so it only falls when the
--           consumer holds m_axis_crc_tready low.
--
-- Output, m_axis_crc, one transfer per input segment, in order:
--   tdata   the running CRC after the segment. Read as stream octets,
--           tdata(7 downto 0) first, it is the CRC field in MPA wire order
--           (least significant octet first, RFC 5044 4.4 / RFC 3720 B.4):
--           compare it lane for lane with a received CRC field, no swap.
--   tid     the segment's tid.
--
-- Throughput: one beat per clock whatever the tkeep pattern, segments back
-- to back (a single-beat segment every clock included).
-- Latency: 7 clocks from the rising edge that accepts a segment's tlast beat
-- to the edge where its result can first be taken (m_axis_crc_tvalid high).
--
-- How: one octet moves the reflected 32-bit CRC register r to A^8 r + B b,
-- linear over GF(2), so a word of N = DATA_W/8 octets moves it to
-- A^(8N) r + D w (D a 32 x DATA_W matrix, w the word). A word whose octets
-- s .. N-1-t are valid is fed whole with its null octets zeroed; the s
-- leading zeros are cancelled by starting the segment from A^(-8s) r0, the
-- t trailing ones by moving the final register back by A^(-8t). Every
-- matrix comes from the polynomial at elaboration through the constant
-- functions below; the powers of A chosen at run time by s or t come from
-- tables of up to 9 (OPT_MAX_c), two per count: its low three bits, then
-- the rest. Pipeline, each stage the logic in front of its registers:
--   s0   input registers.
--   s1   data term D w (null octets zeroed); s and t from tkeep; r0 from
--        tuser, or held from the segment start.
--   s2   A^(-8 (s mod 8)) r0.
--   s3   A^(8N - 64 (s div 8)) of that, XORed into the data term of a
--        segment's first beat with a valid octet.
--   r    the one feedback loop: r <= (first ? 0 : A^(8N) r) xor term.
--   u1   A^(-8 (t mod 8)) r after a segment's last beat.
--   out  A^(-64 (t div 8)) of that and the final XOR, into the result FIFO.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity crc32c is
    generic (
        DATA_W : natural := 64;
        ID_W   : natural := 8
    );
    port (
        clk               : in  std_logic := '0';
        rst               : in  std_logic := '0';

        s_axis_tdata      : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep      : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid     : in  std_logic := '0';
        s_axis_tready     : out std_logic;
        s_axis_tlast      : in  std_logic := '0';
        s_axis_tid        : in  std_logic_vector(ID_W - 1 downto 0) := (others => '0');
        s_axis_tuser      : in  std_logic_vector(32 downto 0) := (others => '0');

        m_axis_crc_tdata  : out std_logic_vector(31 downto 0);
        m_axis_crc_tid    : out std_logic_vector(ID_W - 1 downto 0);
        m_axis_crc_tvalid : out std_logic;
        m_axis_crc_tready : in  std_logic := '0'
    );
end entity crc32c;

architecture rtl of crc32c is

    -- Stops elaboration on generics the design does not support; called by
    -- the first constant below, before anything is derived from them.
    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "crc32c: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        assert ID_W >= 1
            report "crc32c: ID_W must be at least 1, got " & integer'image(ID_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant KEEP_W_c   : positive := DATA_W / 8;          -- octets per word, N
    constant KEEP_LOG_c : natural := clog2(KEEP_W_c);
    constant CNT_W_c    : positive := KEEP_LOG_c + 1;      -- an octet count 0 .. N
    constant HI_W_c     : positive := CNT_W_c - 3;         -- a count divided by 8
    constant HI_N_c     : positive := KEEP_W_c / 8 + 1;    -- values of a count div 8
    constant OPT_MAX_c  : positive := 9;                   -- matrices in a run-time choice

    -- Results in flight (pipeline) plus waiting (FIFO); must exceed the
    -- latency for s_axis_tready to stay high at one result per clock.
    constant OUT_AW_c    : positive := 3;
    constant OUT_DEPTH_c : positive := 2 ** OUT_AW_c;

    subtype word_t is std_ulogic_vector(31 downto 0);
    subtype dword_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(KEEP_W_c - 1 downto 0);
    subtype idx_t is std_ulogic_vector(KEEP_LOG_c - 1 downto 0);
    subtype cnt_t is std_ulogic_vector(CNT_W_c - 1 downto 0);
    subtype hi_t is std_ulogic_vector(HI_W_c - 1 downto 0);
    subtype id_t is std_ulogic_vector(ID_W - 1 downto 0);
    subtype hot_t is std_ulogic_vector(OPT_MAX_c - 1 downto 0);
    subtype ptr_t is unsigned(OUT_AW_c downto 0);
    subtype out_word_t is std_ulogic_vector(ID_W + 31 downto 0);
    type out_mem_t is array (0 to OUT_DEPTH_c - 1) of out_word_t;
    type idx_tab_t is array (0 to KEEP_W_c - 1) of idx_t;

    -- GF(2) matrices are constants, held as bit_vector columns: column k of
    -- a matrix is what input bit k flips in the output. (Columns, and bit
    -- rather than std_ulogic, because GHDL then simulates a product as a
    -- handful of native 32-bit XORs; see mat_mul.)
    subtype gf_word_t is bit_vector(31 downto 0);
    type mat_t is array (0 to 31) of gf_word_t;
    -- Matrices for a choice at run time by a one-hot count.
    type mat_tab_t is array (0 to OPT_MAX_c - 1) of mat_t;
    -- The data matrix D: column j for data bit j.
    type data_mat_t is array (0 to DATA_W - 1) of gf_word_t;

    -- Reflected Castagnoli polynomial (RFC 3720 B.4, RFC 5044 4.4).
    constant POLY_c : gf_word_t := x"82F63B78";

    -- --- GF(2) matrices, derived at elaboration ------------------------------
    --
    -- A is the CRC register's step over one zero bit:
    -- r' = (r >> 1) xor (r(0) ? P : 0). It is invertible: P(31) = '1', so
    -- r(0) comes back as r'(31), and the rest follows.

    function step_fwd(v : gf_word_t) return gf_word_t is
    begin
        if v(0) = '1' then
            return ('0' & v(31 downto 1)) xor POLY_c;
        end if;
        return '0' & v(31 downto 1);
    end function step_fwd;

    function step_back(v : gf_word_t) return gf_word_t is
    begin
        if v(31) = '1' then
            return (v(30 downto 0) xor POLY_c(30 downto 0)) & '1';
        end if;
        return v(30 downto 0) & '0';
    end function step_back;

    -- crc_pow(e): A^e; e < 0 moves back over -e bits. Unit vector k is
    -- A^(31-k) applied to unit vector 31, so column k of A^e is x(e+31-k) in
    -- the sequence x(n) = A^n e31, walked once forward from n = 0 and once
    -- backward from n = -1.
    function crc_pow(e : integer) return mat_t is
        variable m : mat_t := (others => (others => '0'));
        variable v : gf_word_t;
    begin
        v := x"80000000";
        for n in 0 to e + 31 loop
            if n >= e then
                m(e + 31 - n) := v;
            end if;
            v := step_fwd(v);
        end loop;
        v := x"80000000";
        for n in -1 downto e loop
            v := step_back(v);
            if n <= e + 31 then
                m(e + 31 - n) := v;
            end if;
        end loop;
        return m;
    end function crc_pow;

    -- data_mat: D, what a whole word does to a zero register. Data bit j is
    -- taken in j-th (octet 0's least significant bit first); it leaves P in
    -- the register, which the DATA_W-1-j bits after it move on, so column j
    -- is A^(DATA_W-1-j) P.
    function data_mat return data_mat_t is
        variable d : data_mat_t;
        variable v : gf_word_t;
    begin
        v := POLY_c;
        for j in DATA_W - 1 downto 0 loop
            d(j) := v;
            v := step_fwd(v);
        end loop;
        return d;
    end function data_mat;

    -- mat_table(e0, de, n): A^(e0 + o de) for o = 0 .. n-1; zero beyond.
    function mat_table(e0 : integer; de : integer; n : natural) return mat_tab_t is
        variable t : mat_tab_t := (others => (others => (others => '0')));
    begin
        for o in 0 to n - 1 loop
            t(o) := crc_pow(e0 + o * de);
        end loop;
        return t;
    end function mat_table;

    -- mat_mul(m, v): m times v, the XOR of the columns of m picked by the
    -- ones of v; with m a constant, a fixed XOR network. A bit of v not yet
    -- written (U) counts as 0 (no reset on the datapath, as in crc32c.v).
    function mat_mul(m : mat_t; v : word_t) return word_t is
        variable acc : gf_word_t := (others => '0');
    begin
        for k in 0 to 31 loop
            if v(k) = '1' then
                acc := acc xor m(k);
            end if;
        end loop;
        return to_stdulogicvector(acc);
    end function mat_mul;

    -- mat_mul_hot(t, hot, v): the matrix of t picked by a one-hot vector,
    -- times v; zero when no bit is set. crc32c.v picks the matrix row by row
    -- with an AND-OR of constant rows; for a one-hot choice that is the same
    -- function.
    function mat_mul_hot(t : mat_tab_t; hot : hot_t; v : word_t) return word_t is
    begin
        for o in 0 to OPT_MAX_c - 1 loop
            if hot(o) = '1' then
                return mat_mul(t(o), v);
            end if;
        end loop;
        return (31 downto 0 => '0');
    end function mat_mul_hot;

    -- one_hot(count, n): bit o set when count = o, for o < n; none when the
    -- count has a bit other than 0 or 1 (a register not yet written).
    function one_hot(count : std_ulogic_vector; n : natural) return hot_t is
        variable c : std_ulogic_vector(count'length - 1 downto 0) := count;
        variable value : natural := 0;
        variable hot : hot_t := (others => '0');
    begin
        for b in c'range loop
            if c(b) = '1' then
                value := value + 2 ** b;
            elsif c(b) /= '0' then
                return hot;
            end if;
        end loop;
        if value < n then
            hot(value) := '1';
        end if;
        return hot;
    end function one_hot;

    -- idx_table: octet position k as a KEEP_LOG_c-bit vector.
    function idx_table return idx_tab_t is
        variable t : idx_tab_t;
    begin
        for k in 0 to KEEP_W_c - 1 loop
            t(k) := std_ulogic_vector(to_unsigned(k, KEEP_LOG_c));
        end loop;
        return t;
    end function idx_table;

    constant WORD_MAT_c : mat_t := crc_pow(DATA_W);        -- A^(8N): one whole word
    constant DATA_MAT_c : data_mat_t := data_mat;
    constant IDX_c      : idx_tab_t := idx_table;

    -- Matrices chosen at run time by an octet count.
    constant BACK_LO_c  : mat_tab_t := mat_table(0, -8, 8);              -- A^(-8 o), o < 8
    constant START_HI_c : mat_tab_t := mat_table(DATA_W, -64, HI_N_c);   -- A^(8N - 64 o), o <= N/8
    constant BACK_HI_c  : mat_tab_t := mat_table(0, -64, HI_N_c - 1);    -- A^(-64 o), o < N/8

    -- --- s0: input registers ---------------------------------------------------

    signal s_axis_tready_reg, s_axis_tready_next : std_ulogic := '0';

    signal s0_valid_reg : std_ulogic := '0';
    signal s0_data_reg  : dword_t;
    signal s0_keep_reg  : keep_t;
    signal s0_last_reg  : std_ulogic;
    signal s0_id_reg    : id_t;
    signal s0_user_reg  : std_ulogic_vector(32 downto 0);

    signal s_accept : std_ulogic;

    -- --- s1: data term, null octets, segment start -----------------------------

    -- Segment state: the next beat starts a segment; no valid octet yet in
    -- this segment; the register value the segment starts from.
    signal seg_start_reg : std_ulogic := '1';
    signal seg_start_next : std_ulogic;
    signal seg_none_reg : std_ulogic := '1';
    signal seg_none_next : std_ulogic;
    signal seg_r0_reg, seg_r0_next : word_t;

    signal s0_lead   : cnt_t;             -- s
    signal s0_trail  : cnt_t;             -- t
    signal s0_first  : std_ulogic;        -- the beat loads r from r0
    signal s0_upd    : std_ulogic;        -- the beat changes r
    signal s0_r0     : word_t;

    signal s1_valid_reg : std_ulogic := '0';
    signal s1_upd_reg   : std_ulogic := '0';
    signal s1_first_reg : std_ulogic;
    signal s1_last_reg  : std_ulogic;
    signal s1_id_reg    : id_t;
    signal s1_d_reg     : word_t;
    signal s1_r0_reg    : word_t;
    signal s1_lead_reg  : cnt_t;
    signal s1_trail_reg : cnt_t;

    signal d_term : word_t;   -- D times the zeroed word

    -- --- s2, s3: the start term for a segment's first data beat ---------------

    signal s2_valid_reg   : std_ulogic := '0';
    signal s2_upd_reg     : std_ulogic := '0';
    signal s2_first_reg   : std_ulogic;
    signal s2_last_reg    : std_ulogic;
    signal s2_id_reg      : id_t;
    signal s2_d_reg       : word_t;
    signal s2_start_reg   : word_t;
    signal s2_lead_hi_reg : hi_t;
    signal s2_trail_reg   : cnt_t;

    signal s3_valid_reg : std_ulogic := '0';
    signal s3_upd_reg   : std_ulogic := '0';
    signal s3_first_reg : std_ulogic;
    signal s3_last_reg  : std_ulogic;
    signal s3_id_reg    : id_t;
    signal s3_term_reg  : word_t;
    signal s3_trail_reg : cnt_t;

    signal lead_lo_hot, lead_hi_hot : hot_t;   -- s mod 8, s div 8, one-hot
    signal s2_start_next : word_t;
    signal start_hi      : word_t;
    signal s3_term_next  : word_t;

    -- --- r: the CRC register ---------------------------------------------------

    signal r_reg, r_next             : word_t;
    signal r_trail_reg, r_trail_next : cnt_t;   -- t of the last beat that changed r
    signal r_done_reg                : std_ulogic := '0';   -- r holds a segment's end
    signal r_id_reg                  : id_t;

    -- --- u1, out: trailing null octets, final XOR, result FIFO -----------------

    signal u1_valid_reg    : std_ulogic := '0';
    signal u1_id_reg       : id_t;
    signal u1_r_reg        : word_t;
    signal u1_trail_hi_reg : hi_t;

    signal trail_lo_hot, trail_hi_hot : hot_t;   -- t mod 8, t div 8, one-hot
    signal u1_r_next : word_t;
    signal out_crc   : word_t;

    signal out_mem : out_mem_t;
    signal out_wr_ptr_reg, out_wr_ptr_next : ptr_t := (others => '0');
    signal out_rd_ptr_reg, out_rd_ptr_next : ptr_t := (others => '0');
    signal pending_reg, pending_next       : ptr_t := (others => '0');
    signal out_word  : out_word_t;
    signal out_valid : std_ulogic;
    signal out_take  : std_ulogic;

begin

    s_axis_tready <= s_axis_tready_reg;

    s_accept <= s_axis_tvalid and s_axis_tready_reg;

    -- --- s1 ----------------------------------------------------------------------

    -- D times the word with its null octets zeroed: the columns of D picked
    -- by the valid one bits.
    p_d_term : process (all) is
        variable acc : gf_word_t;
    begin
        acc := (others => '0');
        for j in 0 to DATA_W - 1 loop
            if s0_keep_reg(j / 8) = '1' and s0_data_reg(j) = '1' then
                acc := acc xor DATA_MAT_c(j);
            end if;
        end loop;
        d_term <= to_stdulogicvector(acc);
    end process p_d_term;

    p_s1 : process (all) is
        variable keep_rise : keep_t;   -- first valid octet
        variable keep_fall : keep_t;   -- last valid octet
        variable first_idx : idx_t;
        variable last_idx  : idx_t;
        variable any       : std_ulogic;   -- any valid octet in the beat
        variable r0        : word_t;
        variable first     : std_ulogic;
    begin
        -- With one contiguous run of valid octets, exactly one octet starts
        -- it and one ends it; encode their positions.
        keep_rise := s0_keep_reg and not (s0_keep_reg(KEEP_W_c - 2 downto 0) & '0');
        keep_fall := s0_keep_reg and not ('0' & s0_keep_reg(KEEP_W_c - 1 downto 1));
        first_idx := (others => '0');
        last_idx := (others => '0');
        for k in 0 to KEEP_W_c - 1 loop
            if keep_rise(k) = '1' then
                first_idx := first_idx or IDX_c(k);
            end if;
            if keep_fall(k) = '1' then
                last_idx := last_idx or IDX_c(k);
            end if;
        end loop;
        any := or s0_keep_reg;
        -- An empty beat counts as N leading null octets, so that a segment
        -- with no valid octet at all starts (and ends) at A^(8N - 8N) r0 = r0.
        if any = '1' then
            s0_lead <= '0' & first_idx;
            s0_trail <= '0' & not last_idx;
        else
            s0_lead <= std_ulogic_vector(to_unsigned(KEEP_W_c, CNT_W_c));
            s0_trail <= (others => '0');
        end if;

        -- init = 1 starts from the empty message, whose raw register is all
        -- ones; a saved state is a finished CRC, the complement of the raw
        -- register (the final XOR of RFC 3720 B.4).
        if seg_start_reg = '1' then
            r0 := not (s0_user_reg(32 downto 1) and (31 downto 0 => not s0_user_reg(0)));
        else
            r0 := seg_r0_reg;
        end if;
        s0_r0 <= r0;
        -- The first beat with a valid octet loads r from r0, or the last beat
        -- of a segment that had none. Empty beats elsewhere leave r alone.
        first := (seg_start_reg or seg_none_reg) and (any or s0_last_reg);
        s0_first <= first;
        s0_upd <= s0_valid_reg and (any or first);

        seg_start_next <= seg_start_reg;
        seg_none_next <= seg_none_reg;
        seg_r0_next <= seg_r0_reg;
        if s0_valid_reg = '1' then
            seg_start_next <= s0_last_reg;
            seg_none_next <= s0_last_reg or ((seg_start_reg or seg_none_reg) and not any);
            seg_r0_next <= r0;
        end if;
    end process p_s1;

    -- --- s2, s3 ------------------------------------------------------------------

    lead_lo_hot <= one_hot(s1_lead_reg(2 downto 0), 8);
    lead_hi_hot <= one_hot(s2_lead_hi_reg, HI_N_c);

    s2_start_next <= mat_mul_hot(BACK_LO_c, lead_lo_hot, s1_r0_reg);
    start_hi <= mat_mul_hot(START_HI_c, lead_hi_hot, s2_start_reg);

    s3_term_next <= s2_d_reg xor start_hi when s2_first_reg = '1' else s2_d_reg;

    -- --- r -------------------------------------------------------------------------

    p_r : process (all) is
    begin
        r_next <= r_reg;
        r_trail_next <= r_trail_reg;
        if s3_upd_reg = '1' then
            if s3_first_reg = '1' then
                r_next <= s3_term_reg;
            else
                r_next <= mat_mul(WORD_MAT_c, r_reg) xor s3_term_reg;
            end if;
            r_trail_next <= s3_trail_reg;
        end if;
    end process p_r;

    -- --- u1, out -------------------------------------------------------------------

    trail_lo_hot <= one_hot(r_trail_reg(2 downto 0), 8);
    trail_hi_hot <= one_hot(u1_trail_hi_reg, HI_N_c - 1);

    u1_r_next <= mat_mul_hot(BACK_LO_c, trail_lo_hot, r_reg);
    -- The final XOR (RFC 3720 B.4) on the way out.
    out_crc <= not mat_mul_hot(BACK_HI_c, trail_hi_hot, u1_r_reg);

    out_word <= out_mem(to_integer(out_rd_ptr_reg(OUT_AW_c - 1 downto 0)));
    out_valid <= '1' when out_wr_ptr_reg /= out_rd_ptr_reg else '0';
    out_take <= out_valid and m_axis_crc_tready;

    m_axis_crc_tvalid <= out_valid;
    m_axis_crc_tdata <= out_word(31 downto 0);
    m_axis_crc_tid <= out_word(ID_W + 31 downto 32);

    p_out : process (all) is
        variable pending : ptr_t;
    begin
        out_wr_ptr_next <= out_wr_ptr_reg;
        if u1_valid_reg = '1' then
            out_wr_ptr_next <= out_wr_ptr_reg + 1;
        end if;
        out_rd_ptr_next <= out_rd_ptr_reg;
        if out_take = '1' then
            out_rd_ptr_next <= out_rd_ptr_reg + 1;
        end if;
        -- Every accepted tlast beat is a result that will need a FIFO entry.
        pending := pending_reg;
        if s_accept = '1' and s_axis_tlast = '1' then
            pending := pending + 1;
        end if;
        if out_take = '1' then
            pending := pending - 1;
        end if;
        pending_next <= pending;
        if pending < OUT_DEPTH_c then
            s_axis_tready_next <= '1';
        else
            s_axis_tready_next <= '0';
        end if;
    end process p_out;

    -- --- registers -------------------------------------------------------------

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            s_axis_tready_reg <= s_axis_tready_next;

            s0_valid_reg <= s_accept;
            s0_data_reg <= s_axis_tdata;
            s0_keep_reg <= s_axis_tkeep;
            s0_last_reg <= s_axis_tlast;
            s0_id_reg <= s_axis_tid;
            s0_user_reg <= s_axis_tuser;

            seg_start_reg <= seg_start_next;
            seg_none_reg <= seg_none_next;
            seg_r0_reg <= seg_r0_next;

            s1_valid_reg <= s0_valid_reg;
            s1_upd_reg <= s0_upd;
            s1_first_reg <= s0_first;
            s1_last_reg <= s0_last_reg;
            s1_id_reg <= s0_id_reg;
            s1_d_reg <= d_term;
            s1_r0_reg <= s0_r0;
            s1_lead_reg <= s0_lead;
            s1_trail_reg <= s0_trail;

            s2_valid_reg <= s1_valid_reg;
            s2_upd_reg <= s1_upd_reg;
            s2_first_reg <= s1_first_reg;
            s2_last_reg <= s1_last_reg;
            s2_id_reg <= s1_id_reg;
            s2_d_reg <= s1_d_reg;
            s2_start_reg <= s2_start_next;
            s2_lead_hi_reg <= s1_lead_reg(CNT_W_c - 1 downto 3);
            s2_trail_reg <= s1_trail_reg;

            s3_valid_reg <= s2_valid_reg;
            s3_upd_reg <= s2_upd_reg;
            s3_first_reg <= s2_first_reg;
            s3_last_reg <= s2_last_reg;
            s3_id_reg <= s2_id_reg;
            s3_term_reg <= s3_term_next;
            s3_trail_reg <= s2_trail_reg;

            r_reg <= r_next;
            r_trail_reg <= r_trail_next;
            r_done_reg <= s3_valid_reg and s3_last_reg;
            r_id_reg <= s3_id_reg;

            u1_valid_reg <= r_done_reg;
            u1_id_reg <= r_id_reg;
            u1_r_reg <= u1_r_next;
            u1_trail_hi_reg <= r_trail_reg(CNT_W_c - 1 downto 3);

            if u1_valid_reg = '1' then
                out_mem(to_integer(out_wr_ptr_reg(OUT_AW_c - 1 downto 0))) <= u1_id_reg & out_crc;
            end if;
            out_wr_ptr_reg <= out_wr_ptr_next;
            out_rd_ptr_reg <= out_rd_ptr_next;
            pending_reg <= pending_next;

            -- Synchronous reset of the control state, as an override after
            -- the normal update; the datapath registers are not reset.
            if rst = '1' then
                s_axis_tready_reg <= '0';
                s0_valid_reg <= '0';
                seg_start_reg <= '1';
                seg_none_reg <= '1';
                s1_valid_reg <= '0';
                s1_upd_reg <= '0';
                s2_valid_reg <= '0';
                s2_upd_reg <= '0';
                s3_valid_reg <= '0';
                s3_upd_reg <= '0';
                r_done_reg <= '0';
                u1_valid_reg <= '0';
                out_wr_ptr_reg <= (others => '0');
                out_rd_ptr_reg <= (others => '0');
                pending_reg <= (others => '0');
            end if;
        end if;
    end process p_reg;

end architecture rtl;
