-- rx_join: joins a ULPDU's first pieces until they hold its DDP/RDMAP
-- header, between mpa_rx and ddp_rx, for many connections, DATA_W bits per
-- clock.
--
-- VHDL-2008 twin of hw/rtl/rx_join.v: same generics, same ports, same
-- registers (by name) and next-state logic, clock for clock the same, so
-- tests/rx_join/test_rx_join.py drives both (the Verilog header has the
-- interface, the structure and the figures in full). In brief:
--
-- ddp_rx needs the first piece of every ULPDU to hold at least min(H,
-- ULPDU_Length) octets: H = 46 for a Read Request or Terminate (RFC 5041
-- 4.3, RFC 5040 4.4), 14 for a tagged one (4.2), 18 for the other untagged ones. A first piece that is shorter and does not end its ULPDU is
-- held, per connection (in an sdp_ram), and put in front of that
-- connection's next piece; if the two are still short and do not end the
-- ULPDU they are held again.
--
-- Streams: s_axis, m_axis: ULPDU pieces, one frame each, lane-0 aligned,
-- tkeep all ones but in the last beat; tuser = ulpdu_len(15 downto 0) &
-- conn & first & last (last on the tlast beat only). A piece whose octets
-- all left before its tlast beat came in ends with an empty beat (tkeep 0).
-- s_verdict, m_verdict: tdata = MPA code, tuser = conn, one per ULPDU after
-- its last piece; a verdict goes out only after every last piece that came
-- in before it has left m_axis, never in the clock of that piece's tlast
-- beat. clr_*: clears a connection's held octets.
--
-- Structure: A, the input register: the connection's held state is read
-- from its sdp_ram every clock for the beat at s_axis, used in the clock
-- after (a write at that edge caught in ws_*), and copied, with the writes
-- since, for the clocks the beat waits (held_reg). G, the gather register:
-- GD output beats (8 at W = 64, 4 at 128 and 256, 2 at 512) in a ring
-- (g_w, g_r, g_n), each with its tuser: the piece in progress from g_base
-- on, and before it old_n entries of pieces that have ended (and may go
-- out); a piece without held octets starts behind them while G is not
-- full. Each beat from A is rotated by r (the held octets' count mod N,
-- N = DATA_W / 8), merged below lane r with the previous beat's spill
-- (prev_reg) and written to G; a last beat that spills past lane N-1 takes
-- one more entry. m_axis is G's entry at g_r, valid for earlier pieces'
-- entries and for the piece in progress's once its header is complete. A
-- piece with held octets takes a set-up clock first, once G is empty (or
-- its one entry leaves), which clears them in the RAM: a join loads them
-- into G from entry 0 and sets r; a first piece drops them. A piece that
-- ends short of its header (and of its ULPDU) is held: one commit clock
-- writes its first 45 octets (G from g_base on), with the count, the octets
-- still missing and ulpdu_len, to the RAM, and frees its entries. Verdicts
-- wait on 5-bit counters of last pieces in and out.
--
-- Latency 2 (1 more with held octets; a first piece: from when the beat
-- that brings min(H, ulpdu_len) octets, or its end, is at s_axis); 1 beat
-- a clock within a piece and from piece to piece (see the Verilog header).
--
-- Verification: tests/rx_join/test_rx_join.py.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity rx_join is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk              : in  std_logic := '0';
        rst              : in  std_logic := '0';

        s_axis_tdata     : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep     : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid    : in  std_logic := '0';
        s_axis_tready    : out std_logic;
        s_axis_tlast     : in  std_logic := '0';
        s_axis_tuser     : in  std_logic_vector(CONN_W + 17 downto 0) := (others => '0');

        m_axis_tdata     : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep     : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid    : out std_logic;
        m_axis_tready    : in  std_logic := '0';
        m_axis_tlast     : out std_logic;
        m_axis_tuser     : out std_logic_vector(CONN_W + 17 downto 0);

        s_verdict_tdata  : in  std_logic_vector(2 downto 0) := (others => '0');
        s_verdict_tvalid : in  std_logic := '0';
        s_verdict_tready : out std_logic;
        s_verdict_tuser  : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        m_verdict_tdata  : out std_logic_vector(2 downto 0);
        m_verdict_tvalid : out std_logic;
        m_verdict_tready : in  std_logic := '0';
        m_verdict_tuser  : out std_logic_vector(CONN_W - 1 downto 0);

        clr_valid        : in  std_logic := '0';
        clr_ready        : out std_logic;
        clr_conn         : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0')
    );
end entity rx_join;

architecture rtl of rx_join is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "rx_join: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        assert CONN_W >= 1 and CONN_W <= 16
            report "rx_join: CONN_W must be 1..16, not " & integer'image(CONN_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    -- G: output beats in the gather register, a power of two above the beats
    -- a header can take (46 octets, and held octets rotated in front of them).
    function g_depth(n : positive) return positive is
    begin
        if n = 8 then
            return 8;
        elsif n = 64 then
            return 2;
        end if;
        return 4;
    end function g_depth;

    constant N_c    : positive := DATA_W / 8;                     -- lanes
    constant LG_c   : positive := clog2(N_c);
    constant HOLD_c : natural := 45;                              -- octets held at most: one short of a header
    constant GD_c   : positive := g_depth(N_c);
    constant GA_c   : positive := clog2(GD_c);
    constant PADW_c : positive := GD_c * DATA_W;                  -- G's data, as one vector
    constant HW_c   : natural := 1 + 6 + 6 + 16 + 8 * HOLD_c;     -- held state: valid & rem & count & ulpdu_len & octets
    constant UW_c   : natural := CONN_W + 18;
    constant UF_c   : natural := CONN_W + 17;                     -- an entry's ulpdu_len & conn & first
    constant CW_c   : positive := LG_c + 1;                       -- a beat's count: 0 .. N

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(N_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype held_t is std_ulogic_vector(HW_c - 1 downto 0);
    subtype pad_t is std_ulogic_vector(PADW_c - 1 downto 0);
    subtype cnt_t is unsigned(LG_c downto 0);                     -- octets of a beat, 0 .. N
    subtype gi_t is unsigned(GA_c downto 0);                      -- G's ring indices and fill
    subtype lane_t is unsigned(LG_c - 1 downto 0);
    subtype u6_t is unsigned(5 downto 0);
    subtype u7_t is unsigned(6 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype user_t is std_ulogic_vector(UF_c - 1 downto 0);

    constant HDR_c : u7_t := to_unsigned(46, 7);                  -- the longest DDP/RDMAP header (RFC 5040 4.4)
    constant HDR18_c : u7_t := to_unsigned(18, 7);                -- the DDP header, untagged (RFC 5041 4.3)
    constant HDR14_c : u7_t := to_unsigned(14, 7);                -- tagged (4.2)
    constant NC_c  : cnt_t := to_unsigned(N_c, CW_c);             -- a whole beat's count

    -- Octets in a tkeep that is a run from lane 0: its top lane, one-hot
    -- (k and not (k srl 1)), encoded as top + 1, an OR over the lanes (as the
    -- Verilog's keep_count, also for a tkeep that is not a run).
    function keep_count(k_in : std_ulogic_vector) return cnt_t is
        variable k, top : keep_t;
        variable c : cnt_t;
    begin
        k := k_in;
        top := k and not ('0' & k(N_c - 1 downto 1));
        c := (others => '0');
        for b in 0 to N_c - 1 loop
            if top(b) = '1' then
                c := c or to_unsigned(b + 1, CW_c);
            end if;
        end loop;
        return c;
    end function keep_count;

    -- min(H, ulpdu_len), H the header a first piece must hold (see
    -- rx_join.v): 46 octets for an untagged Read Request or Terminate
    -- (RDMAP opcode 1 or 7 in octet 1), 14 for a tagged one (octet 0 bit 7),
    -- 18 for every other untagged one, 46 when the first beat does not hold
    -- both control octets.
    function hdr_of(ulen : u16_t; d : std_ulogic_vector; k : std_ulogic_vector) return u7_t is
        variable h : u7_t;
        variable op : std_ulogic_vector(3 downto 0);
    begin
        op := d(d'low + 11 downto d'low + 8);
        if k(k'low + 1) = '1' and d(d'low + 7) = '1' then
            h := HDR14_c;
        elsif k(k'low + 1) = '1' and op /= "0001" and op /= "0111" then
            h := HDR18_c;
        else
            h := HDR_c;
        end if;
        if ulen < resize(h, 16) then
            return ulen(6 downto 0);
        end if;
        return h;
    end function hdr_of;

    -- --- input register A ---

    signal in_sof_reg  : std_ulogic := '1';                       -- the next s_axis beat starts a piece
    signal a_valid_reg : std_ulogic := '0';
    signal a_data_reg  : data_t := (others => '0');
    signal a_cnt_reg   : cnt_t := (others => '0');                -- its octets
    signal a_tlast_reg : std_ulogic := '0';
    signal a_conn_reg  : conn_t := (others => '0');
    signal a_first_reg : std_ulogic := '0';
    signal a_plast_reg : std_ulogic := '0';                       -- tuser last (on the tlast beat)
    signal a_ulen_reg  : u16_t := (others => '0');
    signal a_hdr_reg   : u7_t := (others => '0');                 -- min(H, ulpdu_len)

    signal s_ulen : u16_t := (others => '0');
    signal s_conn : conn_t := (others => '0');
    signal s_ready, s_go, take : std_ulogic := '0';

    -- --- held state per connection ---

    signal rd_en   : std_ulogic := '1';
    signal rd_data : held_t := (others => '0');
    signal wr_en   : std_ulogic := '0';
    signal wr_addr : conn_t := (others => '0');
    signal wr_data : held_t := (others => '0');

    signal a_fresh_reg : std_ulogic := '0';                       -- A's beat was taken at the last edge
    signal ws_hit_reg  : std_ulogic := '0';
    signal ws_data_reg : held_t := (others => '0');
    signal held_reg    : held_t := (others => '0');

    signal held    : held_t := (others => '0');
    signal h_valid : std_ulogic := '0';
    signal h_rem   : u6_t := (others => '0');                     -- octets still short of the header
    signal h_cnt   : u6_t := (others => '0');
    signal h_ulen  : u16_t := (others => '0');
    signal h_pad   : pad_t := (others => '0');
    signal h_q     : gi_t := (others => '0');                     -- whole beats held (h_cnt div N)
    signal h_r     : lane_t := (others => '0');                   -- octets of the partial beat (h_cnt mod N)

    -- --- G: the gather register ---

    signal g_data_reg : pad_t := (others => '0');
    signal g_cnt_reg  : std_ulogic_vector(GD_c * CW_c - 1 downto 0) := (others => '0');
    signal g_user_reg : std_ulogic_vector(GD_c * UF_c - 1 downto 0) := (others => '0');
    signal g_last_reg : std_ulogic_vector(GD_c - 1 downto 0) := (others => '0');  -- the piece's tlast beat
    signal g_ulast_reg : std_ulogic_vector(GD_c - 1 downto 0) := (others => '0'); -- ... and it ends the ULPDU (tuser last)
    signal g_w_reg    : gi_t := (others => '0');
    signal g_r_reg    : gi_t := (others => '0');
    signal g_n_reg    : gi_t := (others => '0');                  -- entries in G
    signal g_base_reg : gi_t := (others => '0');                  -- the piece in progress's first entry
    signal old_n_reg  : gi_t := (others => '0');                  -- entries before it

    signal g_empty, g_one, g_full : std_ulogic := '0';

    -- The piece in progress (its first beat taken, or its held octets loaded).
    signal pin_reg     : std_ulogic := '0';
    signal dec_reg     : std_ulogic := '0';                       -- its beats may go out (header complete)
    signal flush_reg   : std_ulogic := '0';                       -- a last beat spilled: one more G entry
    signal hold_reg    : std_ulogic := '0';                       -- ... and the piece is held
    signal commit_reg  : std_ulogic := '0';                       -- write the held state, then free G
    signal fcnt_reg    : cnt_t := (others => '0');                -- the spilled octets
    signal rem_reg     : u6_t := (others => '0');                 -- octets still short of the header
    signal tot_reg     : u7_t := (others => '0');                 -- octets so far (while under 46)
    signal r_reg       : lane_t := (others => '0');               -- rotation: held octets mod N (0 but in a join)
    signal mask_reg    : keep_t := (others => '0');               -- lanes below r_reg
    signal prev_reg    : data_t := (others => '0');               -- the last beat rotated: its lanes below r_reg are next
    signal p_conn_reg  : conn_t := (others => '0');
    signal p_ulen_reg  : u16_t := (others => '0');
    signal p_first_reg : std_ulogic := '0';
    signal p_plast_reg : std_ulogic := '0';

    -- --- output ---

    signal o_cnt    : cnt_t := (others => '0');
    signal o_last   : std_ulogic := '0';
    signal o_ulast  : std_ulogic := '0';
    signal o_user   : user_t := (others => '0');
    signal o_keep   : keep_t := (others => '0');
    signal o_data   : data_t := (others => '0');
    signal o_tvalid : std_ulogic := '0';
    signal pop      : std_ulogic := '0';

    -- --- the beat in A ---

    signal start_ok, st_cand, setup, jn_go, take_st, take_ct, do_flush : std_ulogic := '0';
    signal rem_e, tot_e, cnt7 : u7_t := (others => '0');
    signal e_user  : user_t := (others => '0');
    signal cnt_e   : cnt_t := (others => '0');
    signal dec_now, hold_now : std_ulogic := '0';
    signal ahead_lane : lane_t := (others => '0');
    signal ahead_in, ahead : std_ulogic := '0';
    signal rot, ob : data_t := (others => '0');
    signal sum     : unsigned(LG_c + 1 downto 0) := (others => '0');
    signal spill   : std_ulogic := '0';
    signal ob_cnt  : cnt_t := (others => '0');

    -- --- held state writes ---

    signal clr_pend_reg : std_ulogic := '0';
    signal clr_conn_reg : conn_t := (others => '0');
    signal g_from_base  : pad_t := (others => '0');
    signal hold_word    : held_t := (others => '0');
    signal clr_go, w_to_a, w_to_s : std_ulogic := '0';

    -- --- verdicts ---

    -- last pieces gone out ahead of their verdicts, and whether none (see rx_join.v)
    signal gone_last_reg    : std_ulogic := '0';                      -- a last piece's tlast beat left
    signal gone_v_reg    : std_ulogic := '0';                      -- a verdict left
    signal ahead_reg     : unsigned(9 downto 0) := (others => '0');
    signal none_reg      : std_ulogic := '1';                      -- ahead_reg = 0
    signal one_reg       : std_ulogic := '0';                      -- ahead_reg = 1
    signal v_valid_reg   : std_ulogic := '0';
    signal v_code_reg    : std_ulogic_vector(2 downto 0) := (others => '0');
    signal v_conn_reg    : conn_t := (others => '0');
    -- a second place behind it
    signal u_valid_reg   : std_ulogic := '0';
    signal u_code_reg    : std_ulogic_vector(2 downto 0) := (others => '0');
    signal u_conn_reg    : conn_t := (others => '0');

    signal v_tvalid, v_go : std_ulogic := '0';

begin

    -- --- input register A -------------------------------------------------------------

    s_ulen <= unsigned(s_axis_tuser(CONN_W + 17 downto CONN_W + 2));
    s_conn <= s_axis_tuser(CONN_W + 1 downto 2);

    s_ready <= (not a_valid_reg) or take;
    s_axis_tready <= s_ready;
    s_go <= s_axis_tvalid and s_ready;

    -- --- held state per connection -----------------------------------------------------

    -- The RAM is read every clock for the beat at s_axis (conn is the same on
    -- every beat of a piece); the word is used in the clock after the beat
    -- is taken (a_fresh_reg), and copied for the clocks it waits in A.
    rd_en <= '1';

    -- The valid bit, which s_axis_tready waits on through take, has a
    -- table of its own in LUT RAM, read into a flip-flop (rx_join.v).
    held_ram : entity work.sdp_ram
        generic map (WIDTH => HW_c - 1, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => wr_en, wr_addr => wr_addr, wr_data => wr_data(HW_c - 2 downto 0),
            rd_en => rd_en, rd_addr => s_conn, rd_data => rd_data(HW_c - 2 downto 0)
        );

    held_valid_ram : entity work.sdp_ram
        generic map (WIDTH => 1, ADDR_W => CONN_W, LUTRAM => 1)
        port map (
            clk => clk,
            wr_en => wr_en, wr_addr => wr_addr, wr_data => wr_data(HW_c - 1 downto HW_c - 1),
            rd_en => rd_en, rd_addr => s_conn, rd_data => rd_data(HW_c - 1 downto HW_c - 1)
        );

    -- The RAM returns the word as it was at the read; a write to the same
    -- connection at the read's edge is kept in ws_*, and the word for the
    -- beat in A, with the writes to its connection since, in held_reg.
    held <= held_reg when a_fresh_reg = '0' else
            ws_data_reg when ws_hit_reg = '1' else
            rd_data;
    h_valid <= held(HW_c - 1);
    h_rem <= unsigned(held(HW_c - 2 downto HW_c - 7));
    h_cnt <= unsigned(held(HW_c - 8 downto HW_c - 13));
    h_ulen <= unsigned(held(HW_c - 14 downto HW_c - 29));
    h_pad <= std_ulogic_vector(resize(unsigned(held(8 * HOLD_c - 1 downto 0)), PADW_c));
    h_q <= resize(shift_right(h_cnt, LG_c), GA_c + 1);
    h_r <= resize(h_cnt, LG_c);

    -- --- G: the gather register ------------------------------------------------------------

    -- Output beats, in a ring written at g_w and read at g_r (GA+1 bit
    -- indices), each with its tuser: the piece in progress from g_base on,
    -- and before it old_n entries of pieces that have ended (and may go out).
    g_empty <= to_sl(g_n_reg = 0);
    g_one <= to_sl(g_n_reg = 1);
    g_full <= g_n_reg(GA_c);

    -- --- output: G's entry at g_r ----------------------------------------------------------

    p_out : process (all) is
        variable rsel : natural;
        variable c : cnt_t;
    begin
        rsel := to_integer(g_r_reg(GA_c - 1 downto 0));
        o_data <= (others => '0');
        c := (others => '0');
        o_user <= (others => '0');
        o_last <= '0';
        o_ulast <= '0';
        for j in 0 to GD_c - 1 loop
            if j = rsel then
                o_data <= g_data_reg(j * DATA_W + DATA_W - 1 downto j * DATA_W);
                c := unsigned(g_cnt_reg(j * CW_c + CW_c - 1 downto j * CW_c));
                o_user <= g_user_reg(j * UF_c + UF_c - 1 downto j * UF_c);
                o_last <= g_last_reg(j);
                o_ulast <= g_ulast_reg(j);
            end if;
        end loop;
        o_cnt <= c;
        for i in 0 to N_c - 1 loop
            o_keep(i) <= to_sl(i < to_integer(c));
        end loop;
    end process p_out;

    o_tvalid <= (not g_empty) and (to_sl(old_n_reg /= 0) or dec_reg);
    m_axis_tdata <= o_data;
    m_axis_tkeep <= o_keep;
    m_axis_tvalid <= o_tvalid;
    m_axis_tlast <= o_last;
    m_axis_tuser <= o_user & o_ulast;
    pop <= o_tvalid and m_axis_tready;

    -- --- the beat in A ---------------------------------------------------------------------

    -- A piece starts behind the ones before it in G while there is room. A
    -- piece with held octets first takes a set-up clock, once G is empty (or
    -- its one entry leaves in this clock): a join loads them into G from
    -- entry 0; a first piece drops them. Either clears them in the RAM.
    start_ok <= g_empty or (pop and g_one);
    st_cand <= a_valid_reg and not pin_reg and not commit_reg;
    setup <= st_cand and h_valid and (a_first_reg or start_ok);
    jn_go <= setup and not a_first_reg;
    take_st <= st_cand and not h_valid and not g_full;
    take_ct <= a_valid_reg and pin_reg and not flush_reg and not g_full;
    take <= take_st or take_ct;
    do_flush <= flush_reg and not g_full;

    rem_e <= resize(rem_reg, 7) when pin_reg = '1' else
             a_hdr_reg when a_first_reg = '1' else
             (others => '0');
    tot_e <= tot_reg when pin_reg = '1' else (others => '0');
    e_user <= std_ulogic_vector(p_ulen_reg) & p_conn_reg & p_first_reg when pin_reg = '1' else
              std_ulogic_vector(a_ulen_reg) & a_conn_reg & a_first_reg;
    cnt_e <= a_cnt_reg when a_tlast_reg = '1' else NC_c;
    cnt7 <= resize(cnt_e, 7);
    dec_now <= (pin_reg and dec_reg) or to_sl(cnt7 >= rem_e) or (a_tlast_reg and a_plast_reg);
    hold_now <= a_tlast_reg and not dec_now;
    -- Look ahead (N < 46, where a header can take more than one beat): when
    -- A's beat is not the piece's last, the piece's next beat is at s_axis
    -- and is taken at the same edge as A's (s_axis_tready is 1 whenever take
    -- is). If that beat completes the header (its octets, counted by the
    -- tkeep bit of the last lane the header needs, octet rem_e - 1 - N of
    -- it: tkeep is a run from lane 0, all ones but on the tlast beat) or
    -- ends the ULPDU, the piece may go out a clock early: dec_reg is set
    -- with A's beat, and dec_now holds for the next.
    ahead_lane <= resize(rem_e, LG_c) - 1;
    ahead_in <= to_sl(resize(rem_e, 8) > N_c and resize(rem_e, 8) <= 2 * N_c)
                and s_axis_tkeep(to_integer(ahead_lane));
    ahead <= to_sl(N_c < 46) and s_axis_tvalid and not a_tlast_reg
             and (ahead_in or (s_axis_tlast and s_axis_tuser(0)));

    -- The beat rotated by r (lane j to lane j + r mod N), behind the octets
    -- of the previous one.
    p_rot : process (all) is
        variable r : natural;
        variable src : natural;
        variable ro, o : data_t;
    begin
        r := to_integer(r_reg);
        for i in 0 to N_c - 1 loop
            src := (i - r) mod N_c;
            ro(8 * i + 7 downto 8 * i) := a_data_reg(8 * src + 7 downto 8 * src);
            if mask_reg(i) = '1' or flush_reg = '1' then
                o(8 * i + 7 downto 8 * i) := prev_reg(8 * i + 7 downto 8 * i);
            else
                o(8 * i + 7 downto 8 * i) := ro(8 * i + 7 downto 8 * i);
            end if;
        end loop;
        rot <= ro;
        ob <= o;
    end process p_rot;

    sum <= resize(r_reg, LG_c + 2) + resize(a_cnt_reg, LG_c + 2);
    spill <= a_tlast_reg and sum(LG_c) and to_sl(sum(LG_c - 1 downto 0) /= 0);
    ob_cnt <= NC_c when a_tlast_reg = '0' or sum(LG_c) = '1' else sum(LG_c downto 0);

    -- --- held state writes -----------------------------------------------------------------

    clr_ready <= not clr_pend_reg;

    -- A hold's octets: G's entries from the piece's first on.
    p_from_base : process (all) is
        variable gi : natural;
    begin
        for m in 0 to GD_c - 1 loop
            gi := (to_integer(g_base_reg(GA_c - 1 downto 0)) + m) mod GD_c;
            g_from_base(m * DATA_W + DATA_W - 1 downto m * DATA_W) <=
                g_data_reg(gi * DATA_W + DATA_W - 1 downto gi * DATA_W);
        end loop;
    end process p_from_base;

    hold_word <= '1' & std_ulogic_vector(rem_reg) & std_ulogic_vector(tot_reg(5 downto 0))
                 & std_ulogic_vector(p_ulen_reg) & g_from_base(8 * HOLD_c - 1 downto 0);
    wr_en <= commit_reg or setup or clr_pend_reg;
    wr_addr <= p_conn_reg when commit_reg = '1' else
               a_conn_reg when setup = '1' else
               clr_conn_reg;
    wr_data <= hold_word when commit_reg = '1' else (others => '0');
    clr_go <= clr_pend_reg and not commit_reg and not setup;
    w_to_a <= setup or (commit_reg and to_sl(p_conn_reg = a_conn_reg))
              or (clr_go and to_sl(clr_conn_reg = a_conn_reg));
    -- A write at the edge where s_axis's beat is taken (never a set-up: A is
    -- full then, and does not take it).
    w_to_s <= (commit_reg and to_sl(p_conn_reg = s_conn))
              or (clr_pend_reg and not commit_reg and to_sl(clr_conn_reg = s_conn));

    -- --- verdicts: in order with the last pieces ---------------------------------------------

    -- Verdicts come one per ULPDU, in the order of the last pieces: the
    -- head goes once more last pieces than verdicts have gone out, counted
    -- as ahead_reg - gone_v_reg (see rx_join.v).
    s_verdict_tready <= not u_valid_reg;
    v_tvalid <= v_valid_reg and not none_reg and not (one_reg and gone_v_reg);
    m_verdict_tvalid <= v_tvalid;
    m_verdict_tdata <= v_code_reg;
    m_verdict_tuser <= v_conn_reg;
    v_go <= v_tvalid and m_verdict_tready;

    -- --- registers -------------------------------------------------------------------------

    p_reg : process (clk) is
        variable hq : natural;
    begin
        if rising_edge(clk) then
            -- input register
            if s_go = '1' then
                in_sof_reg <= s_axis_tlast;
                a_valid_reg <= '1';
                a_data_reg <= s_axis_tdata;
                a_cnt_reg <= keep_count(s_axis_tkeep);
                a_tlast_reg <= s_axis_tlast;
                a_first_reg <= s_axis_tuser(1);
                a_plast_reg <= s_axis_tuser(0);
                if in_sof_reg = '1' then
                    a_conn_reg <= s_conn;
                    a_ulen_reg <= s_ulen;
                    a_hdr_reg <= hdr_of(s_ulen, s_axis_tdata, s_axis_tkeep);
                end if;
            elsif take = '1' then
                a_valid_reg <= '0';
            end if;

            -- bypass of the held-state RAM
            a_fresh_reg <= s_go;
            ws_hit_reg <= w_to_s;
            ws_data_reg <= wr_data;
            if w_to_a = '1' then
                held_reg <= wr_data;
            else
                held_reg <= held;
            end if;

            -- G and the piece
            if pop = '1' then
                g_r_reg <= g_r_reg + 1;
                if old_n_reg /= 0 then
                    old_n_reg <= old_n_reg - 1;
                end if;
            end if;
            if (take or do_flush) = '1' and pop = '0' then
                g_n_reg <= g_n_reg + 1;
            elsif (take or do_flush) = '0' and pop = '1' then
                g_n_reg <= g_n_reg - 1;
            end if;
            if take = '1' or do_flush = '1' then
                for j in 0 to GD_c - 1 loop
                    if to_integer(g_w_reg(GA_c - 1 downto 0)) = j then
                        g_data_reg(j * DATA_W + DATA_W - 1 downto j * DATA_W) <= ob;
                        if flush_reg = '1' then
                            g_cnt_reg(j * CW_c + CW_c - 1 downto j * CW_c) <= std_ulogic_vector(fcnt_reg);
                        else
                            g_cnt_reg(j * CW_c + CW_c - 1 downto j * CW_c) <= std_ulogic_vector(ob_cnt);
                        end if;
                        g_user_reg(j * UF_c + UF_c - 1 downto j * UF_c) <= e_user;
                        g_last_reg(j) <= flush_reg or (a_tlast_reg and not spill);
                        if flush_reg = '1' then
                            g_ulast_reg(j) <= p_plast_reg;
                        else
                            g_ulast_reg(j) <= a_tlast_reg and not spill and a_plast_reg;
                        end if;
                    end if;
                end loop;
                g_w_reg <= g_w_reg + 1;
            end if;
            if take = '1' then
                if pin_reg = '0' then
                    g_base_reg <= g_w_reg;
                    if pop = '1' then
                        old_n_reg <= g_n_reg - 1;
                    else
                        old_n_reg <= g_n_reg;
                    end if;
                    p_conn_reg <= a_conn_reg;
                    p_ulen_reg <= a_ulen_reg;
                    p_first_reg <= a_first_reg;
                end if;
                dec_reg <= dec_now or ahead;
                rem_reg <= rem_e(5 downto 0) - cnt7(5 downto 0);
                tot_reg <= tot_e + cnt7;
                prev_reg <= rot;
                pin_reg <= '1';
                if a_tlast_reg = '1' then
                    p_plast_reg <= a_plast_reg;
                    hold_reg <= hold_now;
                    fcnt_reg <= '0' & sum(LG_c - 1 downto 0);
                    if spill = '1' then
                        flush_reg <= '1';
                    else
                        pin_reg <= '0';
                        commit_reg <= hold_now;
                        r_reg <= (others => '0');
                        mask_reg <= (others => '0');
                    end if;
                end if;
            end if;
            if do_flush = '1' then
                flush_reg <= '0';
                pin_reg <= '0';
                commit_reg <= hold_reg;
                r_reg <= (others => '0');
                mask_reg <= (others => '0');
            end if;
            if jn_go = '1' then
                g_data_reg <= h_pad;
                for j in 0 to GD_c - 1 loop
                    g_cnt_reg(j * CW_c + CW_c - 1 downto j * CW_c) <= std_ulogic_vector(NC_c);
                    g_user_reg(j * UF_c + UF_c - 1 downto j * UF_c) <= std_ulogic_vector(h_ulen) & a_conn_reg & '1';
                end loop;
                g_last_reg <= (others => '0');
                g_ulast_reg <= (others => '0');
                g_w_reg <= h_q;
                g_r_reg <= (others => '0');
                g_n_reg <= h_q;
                g_base_reg <= (others => '0');
                old_n_reg <= (others => '0');
                hq := to_integer(h_q(GA_c - 1 downto 0));
                prev_reg <= h_pad(hq * DATA_W + DATA_W - 1 downto hq * DATA_W);
                r_reg <= h_r;
                for j in 0 to N_c - 1 loop
                    mask_reg(j) <= to_sl(j < to_integer(h_r));
                end loop;
                rem_reg <= h_rem;
                tot_reg <= resize(h_cnt, 7);
                dec_reg <= '0';
                p_conn_reg <= a_conn_reg;
                p_ulen_reg <= h_ulen;
                p_first_reg <= '1';
                pin_reg <= '1';
            end if;
            if commit_reg = '1' then
                -- the held piece's entries leave G; those before it stay
                commit_reg <= '0';
                g_w_reg <= g_base_reg;
                if pop = '1' then
                    g_n_reg <= old_n_reg - 1;
                else
                    g_n_reg <= old_n_reg;
                end if;
            end if;

            -- clears
            if clr_valid = '1' and clr_pend_reg = '0' then
                clr_pend_reg <= '1';
                clr_conn_reg <= clr_conn;
            elsif clr_go = '1' then
                clr_pend_reg <= '0';
            end if;

            -- verdicts
            gone_last_reg <= pop and o_ulast;
            gone_v_reg <= v_go;
            if gone_last_reg = '1' and gone_v_reg = '0' then
                ahead_reg <= ahead_reg + 1;
                none_reg <= '0';
                one_reg <= none_reg;
            elsif gone_v_reg = '1' and gone_last_reg = '0' then
                ahead_reg <= ahead_reg - 1;
                none_reg <= one_reg;
                if ahead_reg = 2 then
                    one_reg <= '1';
                else
                    one_reg <= '0';
                end if;
            end if;
            if v_go = '1' or v_valid_reg = '0' then
                -- the head is free after this clock: the waiting verdict
                -- moves up, or one comes in
                v_valid_reg <= u_valid_reg or s_verdict_tvalid;
                if u_valid_reg = '1' then
                    v_code_reg <= u_code_reg;
                    v_conn_reg <= u_conn_reg;
                else
                    v_code_reg <= s_verdict_tdata;
                    v_conn_reg <= s_verdict_tuser;
                end if;
                u_valid_reg <= '0';
            elsif s_verdict_tvalid = '1' and u_valid_reg = '0' then
                u_valid_reg <= '1';
                u_code_reg <= s_verdict_tdata;
                u_conn_reg <= s_verdict_tuser;
            end if;

            if rst = '1' then
                in_sof_reg <= '1';
                a_valid_reg <= '0';
                a_fresh_reg <= '0';
                ws_hit_reg <= '0';
                held_reg <= (others => '0');
                g_w_reg <= (others => '0');
                g_r_reg <= (others => '0');
                g_n_reg <= (others => '0');
                g_base_reg <= (others => '0');
                old_n_reg <= (others => '0');
                pin_reg <= '0';
                dec_reg <= '0';
                flush_reg <= '0';
                commit_reg <= '0';
                r_reg <= (others => '0');
                mask_reg <= (others => '0');
                clr_pend_reg <= '0';
                gone_last_reg <= '0';
                gone_v_reg <= '0';
                ahead_reg <= (others => '0');
                none_reg <= '1';
                one_reg <= '0';
                v_valid_reg <= '0';
                u_valid_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
