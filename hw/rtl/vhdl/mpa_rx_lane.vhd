-- mpa_rx_lane: one of the two lanes of the MPA receive path (mpa_rx). Takes
-- the runs mpa_rx_walk assigns to it (a run is the part of one FPDU that
-- one segment carries) and, for each run:
--   - computes its CRC32c over the words crc_lo .. crc_hi-1 of its beats
--     (markers and pad included, RFC 5044 4.4), afresh or, for a run that
--     continues an FPDU begun in an earlier segment, from the running CRC
--     the walker saved;
--   - packs its ULPDU octets (ulp_lo .. ulp_hi-1 of each beat) into one
--     lane-0 aligned output frame, the ULPDU piece (a run without ULPDU
--     octets gives one beat with tkeep all zero; a frame whose octets end on
--     a beat boundary before its run ends has a last beat with tkeep all
--     zero);
--   - when the run ends its FPDU, gives the FPDU's verdict once the CRC is
--     known: 2 if CRCs are on and the CRC word differs (MPA error 2), else 3
--     if a marker or the ULPDU_Length was bad (MPA error 3), else 0;
--   - a nopiece run (a marker alone at the end of a segment) has a CRC and
--     no frame;
--   - when the run was cut by the end of its segment, returns the running
--     CRC to the walker (wb_*).
-- Verdicts carry the FPDU end's number (vseq).
--
-- VHDL-2008 twin of hw/rtl/mpa_rx_lane.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_rx/test_mpa_rx.py drives both.
--
-- Throughput: one input beat a clock, plus one clock for a run whose last
-- beat fills more than one output beat; a three-beat output queue lets the
-- lane take input while mpa_rx holds its output (up to two beats wait
-- behind the head), and s_ready comes from registers. Latency: 3 clocks
-- from an input beat to the output beat it completes; a verdict follows the run's last
-- beat by about 9 clocks (crc32c's 7 and 2).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_rx_lane is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk          : in  std_logic := '0';
        rst          : in  std_logic := '0';

        s_valid      : in  std_logic := '0';
        s_ready      : out std_logic := '0';
        s_data       : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_crc_lo     : in  std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        s_crc_hi     : in  std_logic_vector(clog2(DATA_W / 32) downto 0) := (others => '0');
        s_crcw       : in  std_logic_vector(clog2(DATA_W / 32) - 1 downto 0) := (others => '0');
        s_ulp_lo     : in  std_logic_vector(clog2(DATA_W / 8) downto 0) := (others => '0');
        s_ulp_hi     : in  std_logic_vector(clog2(DATA_W / 8) downto 0) := (others => '0');
        s_run_first  : in  std_logic := '0';
        s_run_last   : in  std_logic := '0';
        s_resume     : in  std_logic := '0';
        s_nopiece    : in  std_logic := '0';
        s_state      : in  std_logic_vector(31 downto 0) := (others => '0');
        s_fpdu_first : in  std_logic := '0';
        s_fpdu_end   : in  std_logic := '0';
        s_conn       : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_ulen       : in  std_logic_vector(15 downto 0) := (others => '0');
        s_crc_en     : in  std_logic := '0';
        s_mkbad      : in  std_logic := '0';
        s_lenbad     : in  std_logic := '0';
        s_vseq       : in  std_logic_vector(7 downto 0) := (others => '0');

        m_tdata      : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_tkeep      : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_tvalid     : out std_logic := '0';
        m_tready     : in  std_logic := '0';
        m_tlast      : out std_logic := '0';
        m_conn       : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_ulen       : out std_logic_vector(15 downto 0) := (others => '0');
        m_first      : out std_logic := '0';
        m_last       : out std_logic := '0';

        v_valid      : out std_logic := '0';
        v_ready      : in  std_logic := '0';
        v_conn       : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        v_code       : out std_logic_vector(2 downto 0) := (others => '0');
        v_vseq       : out std_logic_vector(7 downto 0) := (others => '0');

        wb_valid     : out std_logic := '0';
        wb_conn      : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        wb_state     : out std_logic_vector(31 downto 0) := (others => '0')
    );
end entity mpa_rx_lane;

architecture rtl of mpa_rx_lane is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_rx_lane: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c       : positive := DATA_W / 8;
    constant LN_c      : positive := clog2(N_c);
    constant WORDS_c   : positive := DATA_W / 32;
    constant WL_c      : positive := clog2(WORDS_c) + 1;
    constant OL_c      : positive := LN_c + 1;
    constant INFO_AW_c : positive := 4;                     -- runs whose CRC is in flight
    constant INFO_W_c  : positive := 1 + CONN_W + 1 + 1 + 1 + 32 + 8;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(N_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype info_t is std_ulogic_vector(INFO_W_c - 1 downto 0);
    subtype ptr_t is unsigned(INFO_AW_c downto 0);
    subtype fill_t is unsigned(LN_c - 1 downto 0);
    subtype tot_t is unsigned(OL_c downto 0);
    type info_mem_t is array (0 to 2 ** INFO_AW_c - 1) of info_t;
    -- An output beat in the queue: {data, keep, tlast, conn, ulen, first, last}.
    constant QW_c : positive := DATA_W + N_c + 1 + CONN_W + 16 + 1 + 1;
    subtype q_t is std_ulogic_vector(QW_c - 1 downto 0);

    -- tkeep of a beat holding the lanes below f.
    function keep_fill(f : fill_t) return keep_t is
        variable k : keep_t;
    begin
        for j in 0 to N_c - 1 loop
            k(j) := to_sl(j < to_integer(f));
        end loop;
        return k;
    end function keep_fill;

    -- The octets of the lanes whose keep bit is set, zeros elsewhere.
    function mask_lanes(lanes : keep_t) return data_t is
        variable d : data_t;
    begin
        for j in 0 to N_c - 1 loop
            d(8 * j + 7 downto 8 * j) := (others => lanes(j));
        end loop;
        return d;
    end function mask_lanes;

    -- --- CRC ---

    signal crc_ready, pk_ready : std_ulogic := '0';
    signal info_wr_reg, info_rd_reg : ptr_t := (others => '0');
    signal info_full, s_ready_i, take : std_ulogic := '0';

    signal crc_keep       : std_logic_vector(N_c - 1 downto 0) := (others => '0');
    signal crc_user       : std_logic_vector(32 downto 0) := (others => '0');
    signal crc_out        : std_logic_vector(31 downto 0) := (others => '0');
    signal crc_out_valid  : std_logic := '0';
    signal crc_out_ready  : std_ulogic := '0';
    signal crc_tid_unused : std_logic_vector(0 downto 0) := (others => '0');

    -- What the verdict needs of each run, in run order beside crc32c.
    signal info_mem : info_mem_t := (others => (others => '0'));
    signal rx_crc   : std_ulogic_vector(31 downto 0) := (others => '0');
    signal info     : info_t := (others => '0');
    signal i_end    : std_ulogic := '0';
    signal i_conn   : conn_t := (others => '0');
    signal i_crc_en, i_mkbad, i_lenbad : std_ulogic := '0';
    signal i_crc    : std_ulogic_vector(31 downto 0) := (others => '0');
    signal i_vseq   : std_ulogic_vector(7 downto 0) := (others => '0');

    signal v_valid_reg  : std_ulogic := '0';
    signal v_conn_reg   : conn_t := (others => '0');
    signal v_code_reg   : std_ulogic_vector(2 downto 0) := (others => '0');
    signal v_vseq_reg   : std_ulogic_vector(7 downto 0) := (others => '0');
    signal wb_valid_reg : std_ulogic := '0';
    signal wb_conn_reg  : conn_t := (others => '0');
    signal wb_state_reg : std_ulogic_vector(31 downto 0) := (others => '0');

    -- --- k1: the beat's ULPDU octets moved down to lane 0 ---

    signal k1_valid      : std_ulogic := '0';
    signal k1_data       : data_t := (others => '0');
    signal k1_n          : unsigned(OL_c - 1 downto 0) := (others => '0');
    signal k1_run_first  : std_ulogic := '0';
    signal k1_run_last   : std_ulogic := '0';
    signal k1_fpdu_first : std_ulogic := '0';
    signal k1_fpdu_end   : std_ulogic := '0';
    signal k1_conn       : conn_t := (others => '0');
    signal k1_ulen       : std_ulogic_vector(15 downto 0) := (others => '0');
    signal k1_take       : std_ulogic := '0';
    signal lo            : fill_t := (others => '0');

    -- --- k2: octets appended at the fill position of the frame being built ---

    signal acc_reg   : data_t := (others => '0');
    signal fill_reg  : fill_t := (others => '0');
    signal flush_reg : std_ulogic := '0';     -- the frame's last beat is still to go

    signal run_conn_reg  : conn_t := (others => '0');
    signal run_ulen_reg  : std_ulogic_vector(15 downto 0) := (others => '0');
    signal run_first_reg : std_ulogic := '0';
    signal run_conn       : conn_t := (others => '0');
    signal run_ulen       : std_ulogic_vector(15 downto 0) := (others => '0');
    signal run_fpdu_first : std_ulogic := '0';

    signal out_free : std_ulogic := '0';
    signal fill     : fill_t := (others => '0');
    signal acc      : data_t := (others => '0');
    signal y        : data_t := (others => '0');     -- k1_data rotated up by fill
    signal total    : tot_t := (others => '0');
    signal full     : std_ulogic := '0';
    signal spill    : tot_t := (others => '0');
    signal joined   : data_t := (others => '0');     -- acc below fill, y from fill up
    signal rest     : data_t := (others => '0');     -- y below spill (the part past a full beat)
    signal keep_total : keep_t := (others => '0');   -- lanes below total (total < N)

    signal m_tdata_reg  : data_t := (others => '0');
    signal m_tkeep_reg  : keep_t := (others => '0');
    signal m_tvalid_reg : std_ulogic := '0';
    signal m_tlast_reg  : std_ulogic := '0';
    signal m_conn_reg   : conn_t := (others => '0');
    signal m_ulen_reg   : std_ulogic_vector(15 downto 0) := (others => '0');
    signal m_first_reg  : std_ulogic := '0';
    signal m_last_reg   : std_ulogic := '0';

    -- The output queue behind m_* (its head), and the beat the pack stage
    -- makes this clock.
    signal sk0_valid, sk1_valid : std_ulogic := '0';
    signal sk0, sk1, p_beat : q_t := (others => '0');
    signal m_take, p_flush, p_make : std_ulogic := '0';
    signal fl_end_reg : std_ulogic := '0';

begin

    m_tdata <= m_tdata_reg;
    m_tkeep <= m_tkeep_reg;
    m_tvalid <= m_tvalid_reg;
    m_tlast <= m_tlast_reg;
    m_conn <= m_conn_reg;
    m_ulen <= m_ulen_reg;
    m_first <= m_first_reg;
    m_last <= m_last_reg;
    v_valid <= v_valid_reg;
    v_conn <= v_conn_reg;
    v_code <= v_code_reg;
    v_vseq <= v_vseq_reg;
    wb_valid <= wb_valid_reg;
    wb_conn <= wb_conn_reg;
    wb_state <= wb_state_reg;

    -- --- CRC -------------------------------------------------------------------------

    -- Full: the pointers, INFO_AW+1 bits, are 2^INFO_AW apart (mod 2^(INFO_AW+1)).
    info_full <= to_sl(info_wr_reg - info_rd_reg = to_unsigned(2 ** INFO_AW_c, INFO_AW_c + 1));
    s_ready_i <= crc_ready and pk_ready and not info_full;
    s_ready <= s_ready_i;
    take <= s_valid and s_ready_i;

    p_crc_keep : process (all) is
        variable word : natural;
    begin
        for g in 0 to N_c - 1 loop
            word := g / 4;
            crc_keep(g) <= to_sl(word >= to_integer(unsigned(s_crc_lo)) and word < to_integer(unsigned(s_crc_hi)));
        end loop;
    end process p_crc_keep;

    crc_user <= s_state & not s_resume;

    crc : entity work.crc32c
        generic map (DATA_W => DATA_W, ID_W => 1)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => s_data, s_axis_tkeep => crc_keep, s_axis_tvalid => take,
            s_axis_tready => crc_ready, s_axis_tlast => s_run_last, s_axis_tid => "0",
            s_axis_tuser => crc_user,
            m_axis_crc_tdata => crc_out, m_axis_crc_tid => crc_tid_unused,
            m_axis_crc_tvalid => crc_out_valid, m_axis_crc_tready => crc_out_ready
        );

    rx_crc <= s_data(32 * to_integer(unsigned(s_crcw)) + 31 downto 32 * to_integer(unsigned(s_crcw)));
    info <= info_mem(to_integer(info_rd_reg(INFO_AW_c - 1 downto 0)));
    i_end <= info(INFO_W_c - 1);
    i_conn <= info(INFO_W_c - 2 downto INFO_W_c - 1 - CONN_W);
    i_crc_en <= info(42);
    i_mkbad <= info(41);
    i_lenbad <= info(40);
    i_crc <= info(39 downto 8);
    i_vseq <= info(7 downto 0);

    crc_out_ready <= (not i_end) or (not v_valid_reg) or v_ready;

    p_crc_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if take = '1' and s_run_last = '1' then
                info_mem(to_integer(info_wr_reg(INFO_AW_c - 1 downto 0))) <=
                    s_fpdu_end & s_conn & s_crc_en & s_mkbad & s_lenbad & rx_crc & s_vseq;
            end if;

            wb_valid_reg <= '0';
            if v_valid_reg = '1' and v_ready = '1' then
                v_valid_reg <= '0';
            end if;
            if take = '1' and s_run_last = '1' then
                info_wr_reg <= info_wr_reg + 1;
            end if;
            if crc_out_valid = '1' and crc_out_ready = '1' then
                info_rd_reg <= info_rd_reg + 1;
                if i_end = '1' then
                    v_valid_reg <= '1';
                    v_conn_reg <= i_conn;
                    v_vseq_reg <= i_vseq;
                    if i_crc_en = '1' and crc_out /= i_crc then
                        v_code_reg <= "010";
                    elsif i_mkbad = '1' or i_lenbad = '1' then
                        v_code_reg <= "011";
                    else
                        v_code_reg <= "000";
                    end if;
                else
                    wb_valid_reg <= '1';
                    wb_conn_reg <= i_conn;
                    wb_state_reg <= crc_out;
                end if;
            end if;
            if rst = '1' then
                info_wr_reg <= (others => '0');
                info_rd_reg <= (others => '0');
                v_valid_reg <= '0';
                wb_valid_reg <= '0';
            end if;
        end if;
    end process p_crc_reg;

    -- --- packing the ULPDU octets ----------------------------------------------------------

    pk_ready <= (not k1_valid) or k1_take;
    lo <= unsigned(s_ulp_lo(LN_c - 1 downto 0));

    -- k2's inputs: a run's first beat starts a frame afresh.
    run_conn <= k1_conn when k1_run_first = '1' else run_conn_reg;
    run_ulen <= k1_ulen when k1_run_first = '1' else run_ulen_reg;
    run_fpdu_first <= k1_fpdu_first when k1_run_first = '1' else run_first_reg;

    -- The output is a three-beat queue, m_* (its head) then sk0, sk1: the
    -- pack stage goes on while sk1 is empty, so a clock in which mpa_rx's
    -- merge holds the lane's output (while the other lane's piece goes
    -- first) costs no input clock as long as the beats behind it can wait,
    -- and out_free, the lane's s_ready with it, comes from a register
    -- rather than from m_tready through the merge.
    out_free <= not sk1_valid;
    m_take <= m_tvalid_reg and m_tready;
    fill <= (others => '0') when k1_run_first = '1' else fill_reg;
    acc <= (others => '0') when k1_run_first = '1' else acc_reg;
    -- The Verilog takes y from {k1_data, k1_data} at N - fill lanes.
    y <= std_ulogic_vector(rotate_left(unsigned(k1_data), 8 * to_integer(fill)));
    total <= resize(fill, OL_c + 1) + resize(k1_n, OL_c + 1);
    full <= to_sl(total >= N_c);
    spill <= total - N_c;

    p_pack : process (all) is
        variable f, sp, t : natural;
    begin
        f := to_integer(fill);
        sp := to_integer(spill);
        t := to_integer(total);
        for g in 0 to N_c - 1 loop
            if g < f then
                joined(8 * g + 7 downto 8 * g) <= acc(8 * g + 7 downto 8 * g);
            else
                joined(8 * g + 7 downto 8 * g) <= y(8 * g + 7 downto 8 * g);
            end if;
            if g < sp then
                rest(8 * g + 7 downto 8 * g) <= y(8 * g + 7 downto 8 * g);
            else
                rest(8 * g + 7 downto 8 * g) <= (others => '0');
            end if;
            keep_total(g) <= to_sl(g < t);
        end loop;
    end process p_pack;

    k1_take <= k1_valid and out_free and not flush_reg;

    -- The beat the pack stage makes this clock: the rest of a last beat
    -- that overflowed (flush: its run's conn .. first are in run_*_reg, its
    -- FPDU end in fl_end_reg), a full beat, or a run's last beat.
    p_flush <= flush_reg and out_free;
    p_make <= p_flush or (k1_take and (full or k1_run_last));
    p_beat_mk : process (all) is
        variable d : data_t;
        variable k : keep_t;
        variable t : std_ulogic;
    begin
        if p_flush = '1' then
            d := acc_reg;
            k := keep_fill(fill_reg);
            t := '1';
            p_beat <= d & k & t & run_conn_reg & run_ulen_reg & run_first_reg & fl_end_reg;
        else
            if full = '1' then
                d := joined;
                k := (others => '1');
                t := k1_run_last and to_sl(spill = 0);
            else
                d := joined and mask_lanes(keep_total);
                k := keep_total;
                t := '1';
            end if;
            p_beat <= d & k & t & run_conn & run_ulen & run_fpdu_first & k1_fpdu_end;
        end if;
    end process p_beat_mk;

    p_pack_reg : process (clk) is
        -- m_* <= one queued beat.
        procedure set_m(q : q_t) is
            variable o : natural;
        begin
            o := QW_c;
            o := o - DATA_W;
            m_tdata_reg <= q(o + DATA_W - 1 downto o);
            o := o - N_c;
            m_tkeep_reg <= q(o + N_c - 1 downto o);
            o := o - 1;
            m_tlast_reg <= q(o);
            o := o - CONN_W;
            m_conn_reg <= q(o + CONN_W - 1 downto o);
            o := o - 16;
            m_ulen_reg <= q(o + 15 downto o);
            m_first_reg <= q(1);
            m_last_reg <= q(0);
        end procedure set_m;
    begin
        if rising_edge(clk) then
            -- k1
            if k1_take = '1' then
                k1_valid <= '0';
            end if;
            if take = '1' and s_nopiece = '0' then
                k1_valid <= '1';
                -- The Verilog takes it from {s_data, s_data} at lo lanes.
                k1_data <= std_ulogic_vector(rotate_right(unsigned(s_data), 8 * to_integer(lo)));
                k1_n <= unsigned(s_ulp_hi) - unsigned(s_ulp_lo);
                k1_run_first <= s_run_first;
                k1_run_last <= s_run_last;
                k1_fpdu_first <= s_fpdu_first;
                k1_fpdu_end <= s_fpdu_end;
                k1_conn <= s_conn;
                k1_ulen <= s_ulen;
            end if;

            -- k2
            if p_flush = '1' then
                flush_reg <= '0';
            elsif k1_take = '1' then
                if full = '1' then
                    acc_reg <= rest;
                    fill_reg <= spill(LN_c - 1 downto 0);
                    flush_reg <= k1_run_last and to_sl(spill /= 0);
                    fl_end_reg <= k1_fpdu_end;
                else
                    acc_reg <= joined and mask_lanes(keep_total);
                    fill_reg <= total(LN_c - 1 downto 0);
                end if;
                -- A frame's conn, ulen and first are those of its run's first beat.
                if k1_run_first = '1' then
                    run_conn_reg <= k1_conn;
                    run_ulen_reg <= k1_ulen;
                    run_first_reg <= k1_fpdu_first;
                end if;
            end if;

            -- The queue: a beat taken from the head moves the others up; a
            -- new beat goes into the first slot free after that.
            if m_take = '1' then
                m_tvalid_reg <= sk0_valid or p_make;
                if sk0_valid = '1' then
                    set_m(sk0);
                elsif p_make = '1' then
                    set_m(p_beat);
                end if;
                sk0_valid <= sk1_valid or (sk0_valid and p_make);
                if sk1_valid = '1' then
                    sk0 <= sk1;
                else
                    sk0 <= p_beat;
                end if;
                sk1_valid <= '0';
            elsif p_make = '1' then
                if m_tvalid_reg = '0' then
                    m_tvalid_reg <= '1';
                    set_m(p_beat);
                elsif sk0_valid = '0' then
                    sk0_valid <= '1';
                    sk0 <= p_beat;
                else
                    sk1_valid <= '1';
                    sk1 <= p_beat;
                end if;
            end if;

            if rst = '1' then
                k1_valid <= '0';
                m_tvalid_reg <= '0';
                sk0_valid <= '0';
                sk1_valid <= '0';
                flush_reg <= '0';
                fill_reg <= (others => '0');
            end if;
        end if;
    end process p_pack_reg;

end architecture rtl;
