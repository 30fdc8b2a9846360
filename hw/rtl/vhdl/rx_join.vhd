-- rx_join: joins a ULPDU's first pieces until they hold its DDP/RDMAP
-- header, between mpa_rx and ddp_rx, for many connections, DATA_W bits per
-- clock.
--
-- VHDL-2008 twin of hw/rtl/rx_join.v: same generics, same ports, same
-- registers and clock counts, so tests/rx_join/test_rx_join.py drives both
-- (the Verilog header has the interface, the structure and the figures in
-- full). In brief:
--
-- ddp_rx needs the first piece of every ULPDU to hold at least min(46,
-- ULPDU_Length) octets, the longest DDP/RDMAP header (RFC 5041 4.3, RFC
-- 5040 4.4). A first piece that is shorter and does not end its ULPDU is
-- held, per connection (in an sdp_ram), and put in front of that
-- connection's next piece; if the two are still short and do not end the
-- ULPDU they are held again.
--
-- Streams: s_axis, m_axis: ULPDU pieces, one frame each, lane-0 aligned,
-- tkeep all ones but in the last beat; tuser = ulpdu_len(15 downto 0) &
-- conn & first & last (last on the tlast beat only). s_verdict, m_verdict:
-- tdata = MPA code, tuser = conn, one per ULPDU after its last piece; a
-- verdict goes out only after every last piece that came in before it has
-- left m_axis, never in the clock of that piece's tlast beat. clr_*: clears
-- a connection's held octets.
--
-- Structure: an input register (A, where the connection's held state is
-- read from its sdp_ram, with a bypass for writes since the read), an
-- octet queue Q of max(45 + 2N, 3N) octets (N = DATA_W / 8) that the beat
-- in A is appended to, rotated by the queue's fill, and an output register
-- that takes the queue's first N octets. The held state, valid & count &
-- ulpdu_len & 45 octets, is written when a piece's tlast beat is taken.
--
-- Latency 2 (a first piece: from when min(46, ulpdu_len) octets or its end
-- are in); 1 beat a clock within a piece (see the Verilog header).
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

    function imax(a : integer; b : integer) return integer is
    begin
        if a > b then
            return a;
        end if;
        return b;
    end function imax;

    constant N_c    : positive := DATA_W / 8;                     -- lanes
    constant LG_c   : positive := clog2(N_c);
    constant HOLD_c : natural := 45;                              -- octets held at most: one short of a header
    constant QLIM_c : natural := imax(HOLD_c + N_c, 2 * N_c);     -- the queue takes a beat up to this fill
    constant QW_c   : natural := QLIM_c + N_c;                    -- octets in the queue
    constant HW_c   : natural := 1 + 6 + 16 + 8 * HOLD_c;         -- held state: valid & count & ulpdu_len & octets
    constant UW_c   : natural := CONN_W + 18;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(N_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype user_t is std_ulogic_vector(UW_c - 1 downto 0);
    subtype held_t is std_ulogic_vector(HW_c - 1 downto 0);
    subtype q_t is std_ulogic_vector(8 * QW_c - 1 downto 0);
    subtype cnt_t is unsigned(LG_c downto 0);                     -- octets of a beat, 0 .. N
    subtype u4_t is unsigned(3 downto 0);
    subtype u7_t is unsigned(6 downto 0);
    subtype u8_t is unsigned(7 downto 0);
    subtype u16_t is unsigned(15 downto 0);

    constant HDR_c   : u7_t := to_unsigned(46, 7);                -- the longest DDP/RDMAP header (RFC 5040 4.4)
    constant N8_c    : u8_t := to_unsigned(N_c, 8);
    constant QLIM8_c : u8_t := to_unsigned(QLIM_c, 8);

    -- Octets in a tkeep that is a run from lane 0.
    function keep_count(k : std_ulogic_vector) return cnt_t is
        variable c : cnt_t;
    begin
        c := (others => '0');
        for b in 0 to N_c - 1 loop
            if k(k'low + b) = '1' then
                c := to_unsigned(b + 1, LG_c + 1);
            end if;
        end loop;
        return c;
    end function keep_count;

    -- min(46, ulpdu_len).
    function hdr_of(ulen : u16_t) return u7_t is
    begin
        if ulen < resize(HDR_c, 16) then
            return ulen(6 downto 0);
        end if;
        return HDR_c;
    end function hdr_of;

    -- --- input register ---

    signal in_sof_reg  : std_ulogic := '1';                       -- the next s_axis beat starts a piece
    signal a_valid_reg : std_ulogic := '0';
    signal a_data_reg  : data_t := (others => '0');
    signal a_cnt_reg   : cnt_t := (others => '0');                -- its octets
    signal a_tlast_reg : std_ulogic := '0';
    signal a_sof_reg   : std_ulogic := '0';
    signal a_conn_reg  : conn_t := (others => '0');
    signal a_first_reg : std_ulogic := '0';
    signal a_plast_reg : std_ulogic := '0';                       -- tuser last (on the tlast beat)
    signal a_ulen_reg  : u16_t := (others => '0');
    signal a_hdr_reg   : u7_t := (others => '0');                 -- min(46, ulpdu_len)

    signal s_ulen : u16_t := (others => '0');
    signal s_conn : conn_t := (others => '0');
    signal s_ready, s_go, a_take : std_ulogic := '0';

    -- --- held state per connection ---

    signal rd_en   : std_ulogic := '0';
    signal rd_data : held_t := (others => '0');
    signal wr_en   : std_ulogic := '0';
    signal wr_addr : conn_t := (others => '0');
    signal wr_data : held_t := (others => '0');

    signal byp_hit_reg  : std_ulogic := '0';
    signal byp_data_reg : held_t := (others => '0');

    signal held    : held_t := (others => '0');
    signal h_valid : std_ulogic := '0';
    signal h_cnt   : u8_t := (others => '0');
    signal h_ulen  : u16_t := (others => '0');

    -- --- the queue ---

    signal q_data_reg  : q_t := (others => '0');
    signal q_cnt_reg   : u8_t := (others => '0');
    signal act_reg     : std_ulogic := '0';                       -- a piece is in progress in the queue
    signal dec_reg     : std_ulogic := '0';                       -- its octets may go out (header complete)
    signal endf_reg    : std_ulogic := '0';                       -- its tlast beat has been taken
    signal f_first_reg : std_ulogic := '0';
    signal f_last_reg  : std_ulogic := '0';
    signal f_hv_reg    : std_ulogic := '0';
    signal f_conn_reg  : conn_t := (others => '0');
    signal f_ulen_reg  : u16_t := (others => '0');
    signal f_hdr_reg   : u7_t := (others => '0');

    signal start, join_load : std_ulogic := '0';
    signal e_first, e_dec, e_hv, e_plast : std_ulogic := '0';
    signal e_hdr  : u7_t := (others => '0');
    signal e_ulen : u16_t := (others => '0');
    signal e_conn : conn_t := (others => '0');
    signal busy, tl, end_now, dec_now, hold : std_ulogic := '0';
    signal t : u8_t := (others => '0');                           -- octets in the queue with the beat taken
    signal emit_can, o_room, emit, o_end, fin : std_ulogic := '0';
    signal rot : data_t := (others => '0');
    signal v : q_t := (others => '0');
    signal o_keep : keep_t := (others => '0');

    signal fw_en   : std_ulogic := '0';
    signal fw_data : held_t := (others => '0');

    signal clr_pend_reg : std_ulogic := '0';
    signal clr_conn_reg : conn_t := (others => '0');

    signal q_data_next : q_t := (others => '0');
    signal q_cnt_next  : u8_t := (others => '0');

    -- --- output register ---

    signal o_valid_reg : std_ulogic := '0';
    signal o_data_reg  : data_t := (others => '0');
    signal o_keep_reg  : keep_t := (others => '0');
    signal o_tlast_reg : std_ulogic := '0';
    signal o_user_reg  : user_t := (others => '0');

    -- --- verdicts ---

    signal in_lasts_reg  : u4_t := (others => '0');               -- last pieces taken on s_axis
    signal out_lasts_reg : u4_t := (others => '0');               -- last pieces gone out on m_axis
    signal v_valid_reg   : std_ulogic := '0';
    signal v_ok_reg      : std_ulogic := '0';
    signal v_tgt_reg     : u4_t := (others => '0');
    signal v_code_reg    : std_ulogic_vector(2 downto 0) := (others => '0');
    signal v_conn_reg    : conn_t := (others => '0');

    signal v_diff : u4_t := (others => '0');
    signal v_ok, v_tvalid, v_go : std_ulogic := '0';

begin

    -- --- input register -------------------------------------------------------------

    s_ulen <= unsigned(s_axis_tuser(CONN_W + 17 downto CONN_W + 2));
    s_conn <= s_axis_tuser(CONN_W + 1 downto 2);

    s_ready <= (not a_valid_reg) or a_take;
    s_axis_tready <= s_ready;
    s_go <= s_axis_tvalid and s_ready;

    -- --- held state per connection -----------------------------------------------------

    rd_en <= s_go and in_sof_reg;

    held_ram : entity work.sdp_ram
        generic map (WIDTH => HW_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => wr_en, wr_addr => wr_addr, wr_data => wr_data,
            rd_en => rd_en, rd_addr => s_conn, rd_data => rd_data
        );

    -- The RAM returns the word as it was at the read; a write to the same
    -- connection at or after the read (the end of that connection's previous
    -- piece, or a clear) is kept here instead.
    held <= byp_data_reg when byp_hit_reg = '1' else rd_data;
    h_valid <= held(HW_c - 1);
    h_cnt <= "00" & unsigned(held(HW_c - 2 downto HW_c - 7));
    h_ulen <= unsigned(held(HW_c - 8 downto HW_c - 23));

    -- --- the queue -----------------------------------------------------------------------

    -- A piece starts when its first beat is in A and the queue is free.
    start <= (not act_reg) and a_valid_reg and a_sof_reg;
    -- With octets held (and the piece not a new first one: then the held
    -- octets are dropped), the queue first loads them, for one clock.
    join_load <= start and h_valid and not a_first_reg;

    e_first <= f_first_reg when act_reg = '1' else a_first_reg;
    e_dec <= dec_reg when act_reg = '1' else not a_first_reg;
    e_hdr <= f_hdr_reg when act_reg = '1' else a_hdr_reg;
    e_hv <= f_hv_reg when act_reg = '1' else h_valid;
    e_ulen <= f_ulen_reg when act_reg = '1' else a_ulen_reg;
    e_conn <= f_conn_reg when act_reg = '1' else a_conn_reg;

    -- A beat of the piece in progress (or the first of one starting) is
    -- taken while the queue has room for a whole beat.
    busy <= act_reg or (start and not join_load);
    a_take <= a_valid_reg and (not endf_reg) and to_sl(q_cnt_reg <= QLIM8_c) and busy;

    t <= q_cnt_reg + resize(a_cnt_reg, 8) when a_take = '1' else q_cnt_reg;
    tl <= a_take and a_tlast_reg;
    end_now <= endf_reg or tl;
    e_plast <= f_last_reg when endf_reg = '1' else a_plast_reg;
    dec_now <= e_dec or to_sl(t >= e_hdr) or (end_now and e_plast);
    hold <= tl and not dec_now;

    -- A beat goes out as soon as the piece's header is complete (or the
    -- piece ends) and a whole beat is in (or the piece's end is).
    emit_can <= busy and dec_now and (end_now or to_sl(t >= N8_c));
    o_room <= (not o_valid_reg) or m_axis_tready;
    emit <= emit_can and o_room;
    o_end <= end_now and to_sl(t <= N8_c);                        -- the final beat of the piece
    fin <= (emit and o_end) or hold;                              -- the piece leaves the queue

    -- The beat in A rotated to the queue's fill (lane j holds octet j - fill).
    rot <= std_ulogic_vector(rotate_left(unsigned(a_data_reg),
                                         8 * to_integer(q_cnt_reg(LG_c - 1 downto 0))));

    -- V: the queue's octets followed by the beat's.
    p_v : process (all) is
        variable qc : natural;
        variable r : q_t;
    begin
        qc := to_integer(q_cnt_reg);
        for i in 0 to QW_c - 1 loop
            if i < qc then
                r(8 * i + 7 downto 8 * i) := q_data_reg(8 * i + 7 downto 8 * i);
            else
                r(8 * i + 7 downto 8 * i) := rot(8 * (i mod N_c) + 7 downto 8 * (i mod N_c));
            end if;
        end loop;
        v <= r;
    end process p_v;

    p_o_keep : process (all) is
        variable tc : natural;
    begin
        tc := to_integer(t);
        for i in 0 to N_c - 1 loop
            o_keep(i) <= to_sl(i < tc);
        end loop;
    end process p_o_keep;

    -- --- held state writes ---------------------------------------------------------------

    -- At a piece's tlast beat: hold its octets, or clear what was held.
    fw_en <= tl and (hold or e_hv);
    fw_data <= '1' & std_ulogic_vector(t(5 downto 0)) & std_ulogic_vector(e_ulen) & v(8 * HOLD_c - 1 downto 0)
               when hold = '1' else (others => '0');

    clr_ready <= not clr_pend_reg;

    wr_en <= fw_en or clr_pend_reg;
    wr_addr <= e_conn when fw_en = '1' else clr_conn_reg;
    wr_data <= fw_data when fw_en = '1' else (others => '0');

    -- --- next state ------------------------------------------------------------------------

    p_q_next : process (all) is
        variable d : q_t;
    begin
        d := v;
        q_cnt_next <= t;
        if join_load = '1' then
            d(8 * HOLD_c - 1 downto 0) := held(8 * HOLD_c - 1 downto 0);
            q_cnt_next <= h_cnt;
        elsif fin = '1' then
            q_cnt_next <= (others => '0');
        elsif emit = '1' then
            d(8 * QLIM_c - 1 downto 0) := v(8 * QW_c - 1 downto 8 * N_c);
            q_cnt_next <= t - N8_c;
        end if;
        q_data_next <= d;
    end process p_q_next;

    -- --- output register -------------------------------------------------------------------

    m_axis_tdata <= o_data_reg;
    m_axis_tkeep <= o_keep_reg;
    m_axis_tvalid <= o_valid_reg;
    m_axis_tlast <= o_tlast_reg;
    m_axis_tuser <= o_user_reg;

    -- --- verdicts: in order with the last pieces ---------------------------------------------

    -- The counters are 4 bits, compared modulo 16: right while fewer than 8
    -- last pieces are inside the block (its registers hold at most three).
    v_diff <= out_lasts_reg - v_tgt_reg;                          -- in 0..7: all of them out
    v_ok <= v_ok_reg or not v_diff(3);
    s_verdict_tready <= not v_valid_reg;
    v_tvalid <= v_valid_reg and v_ok;
    m_verdict_tvalid <= v_tvalid;
    m_verdict_tdata <= v_code_reg;
    m_verdict_tuser <= v_conn_reg;
    v_go <= v_tvalid and m_verdict_tready;

    -- --- registers -------------------------------------------------------------------------

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            -- input register
            if s_go = '1' then
                in_sof_reg <= s_axis_tlast;
                a_valid_reg <= '1';
                a_data_reg <= s_axis_tdata;
                a_cnt_reg <= keep_count(s_axis_tkeep);
                a_tlast_reg <= s_axis_tlast;
                a_sof_reg <= in_sof_reg;
                a_first_reg <= s_axis_tuser(1);
                a_plast_reg <= s_axis_tuser(0);
                if in_sof_reg = '1' then
                    a_conn_reg <= s_conn;
                    a_ulen_reg <= s_ulen;
                    a_hdr_reg <= hdr_of(s_ulen);
                end if;
            elsif a_take = '1' then
                a_valid_reg <= '0';
            end if;

            -- bypass of the held-state RAM
            if rd_en = '1' then
                byp_hit_reg <= wr_en and to_sl(wr_addr = s_conn);
                byp_data_reg <= wr_data;
            elsif wr_en = '1' and wr_addr = a_conn_reg then
                byp_hit_reg <= '1';
                byp_data_reg <= wr_data;
            end if;

            -- queue
            q_data_reg <= q_data_next;
            q_cnt_reg <= q_cnt_next;
            if join_load = '1' then
                act_reg <= '1';
                dec_reg <= '0';
                endf_reg <= '0';
                f_first_reg <= '1';
                f_hv_reg <= '1';
                f_conn_reg <= a_conn_reg;
                f_ulen_reg <= h_ulen;
                f_hdr_reg <= hdr_of(h_ulen);
            elsif busy = '1' then
                if act_reg = '0' then
                    f_first_reg <= a_first_reg;
                    f_hv_reg <= h_valid;
                    f_conn_reg <= a_conn_reg;
                    f_ulen_reg <= a_ulen_reg;
                    f_hdr_reg <= a_hdr_reg;
                end if;
                act_reg <= not fin;
                dec_reg <= dec_now;
                if tl = '1' then
                    endf_reg <= '1';
                    f_last_reg <= a_plast_reg;
                end if;
                if fin = '1' then
                    endf_reg <= '0';
                end if;
            end if;

            -- output register
            if emit = '1' then
                o_valid_reg <= '1';
                o_data_reg <= v(DATA_W - 1 downto 0);
                o_keep_reg <= o_keep;
                o_tlast_reg <= o_end;
                o_user_reg <= std_ulogic_vector(e_ulen) & e_conn & e_first & (e_plast and o_end);
            elsif m_axis_tready = '1' then
                o_valid_reg <= '0';
            end if;

            -- clears
            if clr_valid = '1' and clr_pend_reg = '0' then
                clr_pend_reg <= '1';
                clr_conn_reg <= clr_conn;
            elsif fw_en = '0' then
                clr_pend_reg <= '0';
            end if;

            -- verdicts
            if s_go = '1' and s_axis_tlast = '1' and s_axis_tuser(0) = '1' then
                in_lasts_reg <= in_lasts_reg + 1;
            end if;
            if o_valid_reg = '1' and m_axis_tready = '1' and o_tlast_reg = '1' and o_user_reg(0) = '1' then
                out_lasts_reg <= out_lasts_reg + 1;
            end if;
            if s_verdict_tvalid = '1' and v_valid_reg = '0' then
                v_valid_reg <= '1';
                v_ok_reg <= '0';
                v_tgt_reg <= in_lasts_reg;
                v_code_reg <= s_verdict_tdata;
                v_conn_reg <= s_verdict_tuser;
            elsif v_go = '1' then
                v_valid_reg <= '0';
                v_ok_reg <= '0';
            else
                v_ok_reg <= v_valid_reg and v_ok;
            end if;

            if rst = '1' then
                in_sof_reg <= '1';
                a_valid_reg <= '0';
                byp_hit_reg <= '0';
                q_cnt_reg <= (others => '0');
                act_reg <= '0';
                dec_reg <= '0';
                endf_reg <= '0';
                o_valid_reg <= '0';
                clr_pend_reg <= '0';
                in_lasts_reg <= (others => '0');
                out_lasts_reg <= (others => '0');
                v_valid_reg <= '0';
                v_ok_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
