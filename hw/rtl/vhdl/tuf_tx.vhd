-- tuf_tx: the TUF transmitter. ULPDUs (DDP segments) in, TUF FPDUs out,
-- octet for octet what iwarp/tuf's Sender produces without packing: the
-- 8-octet header (Length = ULPDU length + 4, then the connection's 48-bit
-- key, both big-endian; draft-ietf-tsvwg-tcp-ulp-frame-01 4.1.1), the
-- ULPDU, and the CRC32c trailer over header and ULPDU, least significant
-- octet first (as RFC 5044 4.4). No pad, no markers.
--
--   s_axis -> b0 -> frame -> +-> crc32c ------+-> merge -> m_axis
--             key     header,  |   (CRC of      |   CRC into the
--             table   shift,   +-> FIFO --------+   trailer lanes
--             read    trailer lanes
--
-- VHDL-2008 twin of hw/rtl/tuf_tx.v: same generics, same ports, same
-- registers and clock counts, so tests/tuf_tx/test_tuf_tx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- Input, s_axis: one frame per ULPDU, lane-0 aligned; tuser, sampled on the
-- first beat: conn(CONN_W-1 downto 0) & len(15 downto 0), len 1 .. 65531.
-- Output, m_axis: one frame per FPDU (len + 12 octets), lane-0 aligned,
-- tuser = conn, tlast at each FPDU's end.
-- Key table: cfg_valid/cfg_ready/cfg_conn/cfg_key (cfg_ready always high).
-- Errors: err_valid/err_code as in mpa_tx_frame (bit 0: length 0 or over
-- 65531, frame dropped; bit 1: frame length differs from len).
-- Throughput: one output beat per clock with FPDUs back to back; latency
-- 10 clocks from the first input beat to the first output beat.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity tuf_tx is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk           : in  std_logic := '0';
        rst           : in  std_logic := '0';

        s_axis_tdata  : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep  : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid : in  std_logic := '0';
        s_axis_tready : out std_logic;
        s_axis_tlast  : in  std_logic := '0';
        s_axis_tuser  : in  std_logic_vector(CONN_W + 15 downto 0) := (others => '0');

        cfg_valid     : in  std_logic := '0';
        cfg_ready     : out std_logic;
        cfg_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_key       : in  std_logic_vector(47 downto 0) := (others => '0');

        m_axis_tdata  : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep  : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid : out std_logic;
        m_axis_tready : in  std_logic := '0';
        m_axis_tlast  : out std_logic;
        m_axis_tuser  : out std_logic_vector(CONN_W - 1 downto 0);

        err_valid     : out std_logic;
        err_code      : out std_logic_vector(1 downto 0)
    );
end entity tuf_tx;

architecture rtl of tuf_tx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "tuf_tx: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c           : positive := DATA_W / 8;   -- octets per beat
    constant KEEP_LOG_c    : positive := clog2(L_c);
    constant BEATS_W_c     : positive := 16 - KEEP_LOG_c;
    constant TL_c          : positive := L_c + 12;     -- lanes of a frame's tail
    constant R_c           : positive := 12;           -- lanes of the tail past the beat
    constant MAX_ULPDU_c   : natural := 65531;
    constant FIFO_AW_c     : positive := 4;   -- must hold more beats than crc32c's latency
    constant CRC_LATENCY_c : positive := 7;   -- crc32c: clocks from a tlast beat to its result
    constant FIFO_W_c      : positive := DATA_W + 2 * L_c + 4 + CONN_W;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype rest_t is std_ulogic_vector(R_c - 1 downto 0);
    subtype beats_t is unsigned(BEATS_W_c - 1 downto 0);
    subtype top_t is unsigned(KEEP_LOG_c - 1 downto 0);
    subtype fifo_word_t is std_ulogic_vector(FIFO_W_c - 1 downto 0);
    type fifo_t is array (0 to 2 ** FIFO_AW_c - 1) of fifo_word_t;
    subtype ptr_t is unsigned(FIFO_AW_c downto 0);

    -- b0: input register
    signal in_frame_reg : std_ulogic := '0';
    signal b0_valid_reg : std_ulogic := '0';
    signal b0_data_reg  : data_t := (others => '0');
    signal b0_keep_reg  : keep_t := (others => '0');
    signal b0_last_reg  : std_ulogic := '0';
    signal b0_first_reg : std_ulogic := '0';
    signal b0_len_reg   : std_ulogic_vector(15 downto 0) := (others => '0');
    signal b0_lenf_reg  : std_ulogic_vector(15 downto 0) := (others => '0');  -- len + 4
    signal b0_bad_reg   : std_ulogic := '0';   -- len is 0 or over MAX_ULPDU
    signal key_fresh_reg : std_ulogic := '0';  -- key_ram is b0's frame's key this clock
    signal key_hold_reg : std_ulogic_vector(47 downto 0) := (others => '0');
    signal b0_conn_reg  : conn_t := (others => '0');

    signal f_take, b0_load, s_ready, key_rd_en : std_ulogic;
    signal key_ram : std_logic_vector(47 downto 0);
    signal key_q : std_ulogic_vector(47 downto 0);

    -- frame
    signal dropping_reg : std_ulogic := '0';
    signal carry_reg    : std_ulogic_vector(63 downto 0) := (others => '0');
    signal conn_q_reg   : conn_t := (others => '0');
    signal rest_on_reg  : std_ulogic := '0';
    signal rest_data_reg : std_ulogic_vector(8 * R_c - 1 downto 0) := (others => '0');
    signal rest_keep_reg, rest_cont_reg, rest_trl_reg : rest_t := (others => '0');
    signal rot_q_reg    : std_ulogic_vector(1 downto 0) := (others => '0');

    signal k_valid_reg : std_ulogic := '0';
    signal k_data_reg  : data_t := (others => '0');
    signal k_keep_reg  : keep_t := (others => '0');
    signal k_trl_reg   : keep_t := (others => '0');
    signal k_rot_reg   : std_ulogic_vector(1 downto 0) := (others => '0');
    signal k_last_reg  : std_ulogic := '0';
    signal k_feed_reg  : std_ulogic := '0';
    signal k_cend_reg  : std_ulogic := '0';
    signal k_user_reg  : conn_t := (others => '0');
    signal k_ready, load : std_ulogic;

    signal bad_len, drop : std_ulogic;
    signal head    : std_ulogic_vector(63 downto 0);
    signal shifted : std_ulogic_vector(DATA_W + 63 downto 0);
    signal cont_ext : std_ulogic_vector(TL_c + 3 downto 0);
    signal tail_data : std_ulogic_vector(8 * TL_c - 1 downto 0);
    signal tail_keep, tail_cont, tail_trl : std_ulogic_vector(TL_c - 1 downto 0);
    signal rot : std_ulogic_vector(1 downto 0);
    signal rest_data_ext : std_ulogic_vector(DATA_W + 8 * R_c - 1 downto 0);
    signal rest_keep_ext, rest_cont_ext, rest_trl_ext : std_ulogic_vector(L_c + R_c - 1 downto 0);
    signal top : top_t;

    signal err_valid_reg : std_ulogic := '0';
    signal err_code_reg  : std_ulogic_vector(1 downto 0) := (others => '0');
    signal beats_reg    : beats_t := (others => '0');
    signal c1_valid_reg : std_ulogic := '0';
    signal c2_valid_reg : std_ulogic := '0';
    signal c1_len_reg   : unsigned(15 downto 0) := (others => '0');
    signal c2_lenm1_reg : unsigned(15 downto 0) := (others => '0');
    signal c1_beats_reg : beats_t := (others => '0');
    signal c2_beats_reg : beats_t := (others => '0');
    signal c1_top_reg   : top_t := (others => '0');
    signal c2_top_reg   : top_t := (others => '0');

    -- CRC and FIFO
    signal crc_keep : std_logic_vector(L_c - 1 downto 0);
    signal crc_in_valid, crc_in_ready : std_logic;
    signal crc_data : std_logic_vector(31 downto 0);
    signal crc_valid, crc_ready : std_logic;
    signal crc_tid_unused : std_logic_vector(0 downto 0);

    signal wr_ptr_reg, rd_ptr_reg : ptr_t := (others => '0');
    signal fill_reg : ptr_t := (others => '0');
    signal fifo_full, fifo_empty, push : std_ulogic;
    signal fifo : fifo_t := (others => (others => '0'));

    signal fhead  : fifo_word_t;
    signal h_data : data_t;
    signal h_keep : keep_t;
    signal h_trl  : keep_t;
    signal h_rot  : std_ulogic_vector(1 downto 0);
    signal h_need, h_last : std_ulogic;
    signal h_user : conn_t;

    signal out_load, primed, pop : std_ulogic;
    signal crc_rot : std_ulogic_vector(31 downto 0);
    signal merged : data_t;

    signal m_data_reg  : data_t := (others => '0');
    signal m_keep_reg  : keep_t := (others => '0');
    signal m_valid_reg : std_ulogic := '0';
    signal m_last_reg  : std_ulogic := '0';
    signal m_user_reg  : conn_t := (others => '0');

begin

    m_axis_tdata <= m_data_reg;
    m_axis_tkeep <= m_keep_reg;
    m_axis_tvalid <= m_valid_reg;
    m_axis_tlast <= m_last_reg;
    m_axis_tuser <= m_user_reg;
    err_valid <= err_valid_reg;
    err_code <= err_code_reg;

    -- --- b0: input register, and the key read for a frame's first beat --------

    s_ready <= (not b0_valid_reg) or f_take;
    s_axis_tready <= s_ready;
    b0_load <= s_axis_tvalid and s_ready;
    -- Read in every clock between frames (the Verilog says why).
    key_rd_en <= not in_frame_reg;
    cfg_ready <= '1';

    key_table : entity work.sdp_ram
        generic map (WIDTH => 48, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => cfg_valid, wr_addr => cfg_conn, wr_data => cfg_key,
            rd_en => key_rd_en, rd_addr => s_axis_tuser(CONN_W + 15 downto 16),
            rd_data => key_ram
        );
    key_q <= std_ulogic_vector(key_ram) when key_fresh_reg = '1' else key_hold_reg;

    p_b0 : process (clk) is
    begin
        if rising_edge(clk) then
            if f_take = '1' then
                b0_valid_reg <= '0';
            end if;
            if b0_load = '1' then
                b0_valid_reg <= '1';
                b0_data_reg <= std_ulogic_vector(s_axis_tdata);
                b0_keep_reg <= std_ulogic_vector(s_axis_tkeep);
                b0_last_reg <= s_axis_tlast;
                b0_first_reg <= not in_frame_reg;
                if in_frame_reg = '0' then
                    b0_len_reg <= std_ulogic_vector(s_axis_tuser(15 downto 0));
                    b0_lenf_reg <= std_ulogic_vector(unsigned(s_axis_tuser(15 downto 0)) + 4);
                    if unsigned(s_axis_tuser(15 downto 0)) = 0
                       or unsigned(s_axis_tuser(15 downto 0)) > MAX_ULPDU_c then
                        b0_bad_reg <= '1';
                    else
                        b0_bad_reg <= '0';
                    end if;
                    b0_conn_reg <= std_ulogic_vector(s_axis_tuser(CONN_W + 15 downto 16));
                end if;
                in_frame_reg <= not s_axis_tlast;
            end if;
            key_fresh_reg <= b0_load and not in_frame_reg;
            if key_fresh_reg = '1' then
                key_hold_reg <= std_ulogic_vector(key_ram);
            end if;
            if rst = '1' then
                b0_valid_reg <= '0';
                in_frame_reg <= '0';
            end if;
        end if;
    end process p_b0;

    -- --- frame: header in front, the ULPDU shifted by it, the trailer's lanes --
    -- (the Verilog explains the tail: lane j holds content when j < 8 or
    -- tkeep(j-8), and is a trailer lane when it does not but lane j-4 does)

    load <= (not k_valid_reg) or k_ready;
    f_take <= b0_valid_reg and load and not rest_on_reg;

    bad_len <= b0_bad_reg;
    drop <= bad_len when b0_first_reg = '1' else dropping_reg;

    p_head : process (all) is
        variable lf : std_ulogic_vector(15 downto 0);
        variable k  : std_ulogic_vector(47 downto 0);
    begin
        lf := b0_lenf_reg;
        k := key_q;
        if b0_first_reg = '1' then
            head <= k(7 downto 0) & k(15 downto 8) & k(23 downto 16) & k(31 downto 24)
                    & k(39 downto 32) & k(47 downto 40)
                    & lf(7 downto 0) & lf(15 downto 8);
        else
            head <= carry_reg;
        end if;
    end process p_head;

    shifted <= b0_data_reg & head;
    cont_ext <= "0000" & b0_keep_reg & x"ff" & "0000";

    p_tail : process (all) is
    begin
        for j in 0 to TL_c - 1 loop
            tail_cont(j) <= cont_ext(j + 4);
            tail_trl(j) <= (not cont_ext(j + 4)) and cont_ext(j);
            tail_keep(j) <= cont_ext(j + 4) or cont_ext(j);
            if j < L_c + 8 and cont_ext(j + 4) = '1' then
                tail_data(8 * j + 7 downto 8 * j) <= shifted(8 * j + 7 downto 8 * j);
            else
                tail_data(8 * j + 7 downto 8 * j) <= (others => '0');
            end if;
        end loop;
    end process p_tail;

    -- m mod 4, m the last beat's octets.
    p_rot : process (all) is
        variable r : std_ulogic_vector(1 downto 0);
    begin
        r := "00";
        for w in 0 to L_c / 4 - 1 loop
            if b0_keep_reg(4 * w) = '1' and b0_keep_reg(4 * w + 1) = '0' then
                r := r or "01";
            end if;
            if b0_keep_reg(4 * w + 1) = '1' and b0_keep_reg(4 * w + 2) = '0' then
                r := r or "10";
            end if;
            if b0_keep_reg(4 * w + 2) = '1' and b0_keep_reg(4 * w + 3) = '0' then
                r := r or "11";
            end if;
        end loop;
        rot <= r;
    end process p_rot;

    rest_data_ext <= (DATA_W - 1 downto 0 => '0') & rest_data_reg;
    rest_keep_ext <= (L_c - 1 downto 0 => '0') & rest_keep_reg;
    rest_cont_ext <= (L_c - 1 downto 0 => '0') & rest_cont_reg;
    rest_trl_ext <= (L_c - 1 downto 0 => '0') & rest_trl_reg;

    p_top : process (all) is
        variable t : top_t;
    begin
        t := (others => '0');
        for k in 0 to L_c - 1 loop
            if b0_keep_reg(k) = '1' and (k = L_c - 1 or b0_keep_reg((k + 1) mod L_c) = '0') then
                t := t or to_unsigned(k, KEEP_LOG_c);
            end if;
        end loop;
        top <= t;
    end process p_top;

    p_frame : process (clk) is
    begin
        if rising_edge(clk) then
            err_valid_reg <= '0';
            err_code_reg <= "00";
            if load = '1' then
                k_valid_reg <= '0';
            end if;
            if rest_on_reg = '1' and load = '1' then
                k_valid_reg <= '1';
                k_data_reg <= rest_data_ext(DATA_W - 1 downto 0);
                k_keep_reg <= rest_keep_ext(L_c - 1 downto 0);
                k_trl_reg <= rest_trl_ext(L_c - 1 downto 0);
                k_rot_reg <= rot_q_reg;
                k_last_reg <= not rest_keep_ext(L_c);
                k_feed_reg <= rest_cont_reg(0);
                k_cend_reg <= rest_cont_reg(0) and not rest_cont_ext(L_c);
                k_user_reg <= conn_q_reg;
                rest_data_reg <= rest_data_ext(DATA_W + 8 * R_c - 1 downto DATA_W);
                rest_keep_reg <= rest_keep_ext(L_c + R_c - 1 downto L_c);
                rest_cont_reg <= rest_cont_ext(L_c + R_c - 1 downto L_c);
                rest_trl_reg <= rest_trl_ext(L_c + R_c - 1 downto L_c);
                rest_on_reg <= rest_keep_ext(L_c);
            elsif f_take = '1' then
                carry_reg <= shifted(DATA_W + 63 downto DATA_W);
                if b0_first_reg = '1' then
                    dropping_reg <= bad_len;
                    conn_q_reg <= b0_conn_reg;
                    beats_reg <= to_unsigned(1, BEATS_W_c);
                else
                    beats_reg <= beats_reg + 1;
                end if;
                if b0_first_reg = '1' and bad_len = '1' then
                    err_valid_reg <= '1';
                    err_code_reg(0) <= '1';
                end if;
                c1_valid_reg <= b0_last_reg and not drop;
                c1_len_reg <= unsigned(b0_len_reg);
                if b0_first_reg = '1' then
                    c1_beats_reg <= (others => '0');
                else
                    c1_beats_reg <= beats_reg;
                end if;
                c1_top_reg <= top;
                if drop = '0' then
                    k_valid_reg <= '1';
                    if b0_first_reg = '1' then
                        k_user_reg <= b0_conn_reg;
                    else
                        k_user_reg <= conn_q_reg;
                    end if;
                    k_feed_reg <= '1';
                    k_rot_reg <= rot;
                    rot_q_reg <= rot;
                    if b0_last_reg = '1' then
                        k_data_reg <= tail_data(DATA_W - 1 downto 0);
                        k_keep_reg <= tail_keep(L_c - 1 downto 0);
                        k_trl_reg <= tail_trl(L_c - 1 downto 0);
                        k_last_reg <= not tail_keep(L_c);
                        k_cend_reg <= not tail_cont(L_c);
                        rest_on_reg <= tail_keep(L_c);
                        rest_data_reg <= tail_data(8 * L_c + 8 * R_c - 1 downto 8 * L_c);
                        rest_keep_reg <= tail_keep(L_c + R_c - 1 downto L_c);
                        rest_cont_reg <= tail_cont(L_c + R_c - 1 downto L_c);
                        rest_trl_reg <= tail_trl(L_c + R_c - 1 downto L_c);
                    else
                        k_data_reg <= shifted(DATA_W - 1 downto 0);
                        k_keep_reg <= (others => '1');
                        k_trl_reg <= (others => '0');
                        k_last_reg <= '0';
                        k_cend_reg <= '0';
                    end if;
                end if;
            end if;
            if f_take = '0' then
                c1_valid_reg <= '0';
            end if;
            c2_valid_reg <= c1_valid_reg;
            c2_lenm1_reg <= c1_len_reg - 1;
            c2_beats_reg <= c1_beats_reg;
            c2_top_reg <= c1_top_reg;
            if c2_valid_reg = '1' and c2_lenm1_reg /= (c2_beats_reg & c2_top_reg) then
                err_valid_reg <= '1';
                err_code_reg(1) <= '1';
            end if;
            if rst = '1' then
                c1_valid_reg <= '0';
                c2_valid_reg <= '0';
                dropping_reg <= '0';
                rest_on_reg <= '0';
                k_valid_reg <= '0';
                err_valid_reg <= '0';
            end if;
        end if;
    end process p_frame;

    -- --- CRC, with the FPDU waiting in a FIFO for it ---------------------------

    crc_keep <= std_logic_vector(k_keep_reg and not k_trl_reg);
    fifo_full <= fill_reg(FIFO_AW_c);
    fifo_empty <= '1' when fill_reg = 0 else '0';
    k_ready <= crc_in_ready and not fifo_full;
    push <= k_valid_reg and k_ready;
    crc_in_valid <= k_valid_reg and k_feed_reg and not fifo_full;

    crc : entity work.crc32c
        generic map (DATA_W => DATA_W, ID_W => 1)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => std_logic_vector(k_data_reg), s_axis_tkeep => crc_keep,
            s_axis_tvalid => crc_in_valid, s_axis_tready => crc_in_ready,
            s_axis_tlast => k_cend_reg, s_axis_tid => "0",
            s_axis_tuser => (32 downto 1 => '0', 0 => '1'),
            m_axis_crc_tdata => crc_data, m_axis_crc_tid => crc_tid_unused,
            m_axis_crc_tvalid => crc_valid, m_axis_crc_tready => crc_ready
        );

    fhead <= fifo(to_integer(rd_ptr_reg(FIFO_AW_c - 1 downto 0)));
    h_data <= fhead(DATA_W - 1 downto 0);
    h_keep <= fhead(DATA_W + L_c - 1 downto DATA_W);
    h_trl <= fhead(DATA_W + 2 * L_c - 1 downto DATA_W + L_c);
    h_rot <= fhead(DATA_W + 2 * L_c + 1 downto DATA_W + 2 * L_c);
    h_need <= fhead(DATA_W + 2 * L_c + 2);
    h_last <= fhead(DATA_W + 2 * L_c + 3);
    h_user <= fhead(DATA_W + 2 * L_c + 4 + CONN_W - 1 downto DATA_W + 2 * L_c + 4);

    -- A beat with trailer lanes leaves with the CRC (the frame's last beat
    -- frees it); the others once the FIFO holds CRC_LATENCY beats or the
    -- head frame's CRC is ready (mpa_tx's rule).
    out_load <= (not m_valid_reg) or m_axis_tready;
    primed <= '1' when crc_valid = '1' or fill_reg >= CRC_LATENCY_c else '0';
    pop <= '1' when fifo_empty = '0' and out_load = '1'
                    and ((h_need = '1' and crc_valid = '1') or (h_need = '0' and primed = '1'))
           else '0';
    crc_ready <= pop and h_last;

    -- The CRC in wire order, rotated: octet (j - rot) mod 4 at j mod 4.
    p_crc_rot : process (all) is
        variable c2 : std_ulogic_vector(63 downto 0);
        variable b  : natural;
    begin
        c2 := std_ulogic_vector(crc_data) & std_ulogic_vector(crc_data);
        b := 32 - 8 * to_integer(unsigned(h_rot));
        crc_rot <= c2(b + 31 downto b);
    end process p_crc_rot;

    p_merged : process (all) is
    begin
        for q in 0 to L_c - 1 loop
            if h_trl(q) = '1' then
                merged(8 * q + 7 downto 8 * q) <= crc_rot(8 * (q mod 4) + 7 downto 8 * (q mod 4));
            else
                merged(8 * q + 7 downto 8 * q) <= h_data(8 * q + 7 downto 8 * q);
            end if;
        end loop;
    end process p_merged;

    p_fifo : process (clk) is
        variable need : std_ulogic;
    begin
        if rising_edge(clk) then
            if push = '1' then
                need := '0';
                for q in 0 to L_c - 1 loop
                    need := need or k_trl_reg(q);
                end loop;
                fifo(to_integer(wr_ptr_reg(FIFO_AW_c - 1 downto 0))) <=
                    k_user_reg & k_last_reg & need & k_rot_reg & k_trl_reg & k_keep_reg & k_data_reg;
                wr_ptr_reg <= wr_ptr_reg + 1;
            end if;
            if push = '1' and pop = '0' then
                fill_reg <= fill_reg + 1;
            elsif push = '0' and pop = '1' then
                fill_reg <= fill_reg - 1;
            end if;
            if out_load = '1' then
                m_valid_reg <= '0';
            end if;
            if pop = '1' then
                rd_ptr_reg <= rd_ptr_reg + 1;
                m_valid_reg <= '1';
                m_data_reg <= merged;
                m_keep_reg <= h_keep;
                m_last_reg <= h_last;
                m_user_reg <= h_user;
            end if;
            if rst = '1' then
                wr_ptr_reg <= (others => '0');
                rd_ptr_reg <= (others => '0');
                fill_reg <= (others => '0');
                m_valid_reg <= '0';
            end if;
        end if;
    end process p_fifo;

end architecture rtl;
