-- tuf_rx: the TUF receive block (draft-ietf-tsvwg-tcp-ulp-frame-01 4.4),
-- DATA_W bits per clock, for 2**CONN_W connections: the ULPDU containment
-- test on each segment of a connection in TUF mode; a segment that passes
-- goes on as one ULPDU piece (header and CRC32c trailer removed) with a
-- verdict after it, everything else to the exception stream with a reason;
-- an out-of-order segment that is one whole FPDU with a good trailer also
-- goes out on m_early for early placement (or is reported on m_skip).
--
-- VHDL-2008 twin of hw/rtl/tuf_rx.v: same generics, same ports, same
-- registers and timing (the Verilog header has the details: the test's
-- order and reasons, the port formats, latency and throughput).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity tuf_rx is
    generic (
        DATA_W     : natural := 64;
        CONN_W     : natural := 10;
        SEG_OCTETS : natural := 16384
    );
    port (
        clk              : in  std_logic := '0';
        rst              : in  std_logic := '0';

        cfg_valid        : in  std_logic := '0';
        cfg_ready        : out std_logic;
        cfg_conn         : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_en           : in  std_logic := '0';
        cfg_key          : in  std_logic_vector(47 downto 0) := (others => '0');
        cfg_base         : in  std_logic_vector(31 downto 0) := (others => '0');

        fail_valid       : in  std_logic := '0';
        fail_ready       : out std_logic;
        fail_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        s_axis_tdata     : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep     : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid    : in  std_logic := '0';
        s_axis_tready    : out std_logic;
        s_axis_tlast     : in  std_logic := '0';
        s_axis_tuser     : in  std_logic_vector(CONN_W + 47 downto 0) := (others => '0');

        m_axis_tdata     : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep     : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid    : out std_logic;
        m_axis_tready    : in  std_logic := '0';
        m_axis_tlast     : out std_logic;
        m_axis_tuser     : out std_logic_vector(CONN_W + 17 downto 0);

        m_verdict_tdata  : out std_logic_vector(2 downto 0);
        m_verdict_tvalid : out std_logic;
        m_verdict_tready : in  std_logic := '0';
        m_verdict_tuser  : out std_logic_vector(CONN_W - 1 downto 0);

        m_exc_tdata      : out std_logic_vector(DATA_W - 1 downto 0);
        m_exc_tkeep      : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_exc_tvalid     : out std_logic;
        m_exc_tready     : in  std_logic := '0';
        m_exc_tlast      : out std_logic;
        m_exc_tuser      : out std_logic_vector(CONN_W + 50 downto 0);

        m_early_tdata    : out std_logic_vector(DATA_W - 1 downto 0);
        m_early_tkeep    : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_early_tvalid   : out std_logic;
        m_early_tready   : in  std_logic := '0';
        m_early_tlast    : out std_logic;
        m_early_tuser    : out std_logic_vector(CONN_W + 47 downto 0);

        m_skip_valid     : out std_logic;
        m_skip_conn      : out std_logic_vector(CONN_W - 1 downto 0);
        m_skip_seq       : out std_logic_vector(31 downto 0);
        m_skip_reason    : out std_logic_vector(1 downto 0);
        early_busy       : out std_logic
    );
end entity tuf_rx;

architecture rtl of tuf_rx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "tuf_rx: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
            severity failure;
        assert CONN_W >= 1 and CONN_W <= 16
            report "tuf_rx: CONN_W must be 1..16, not " & integer'image(CONN_W)
            severity failure;
        assert SEG_OCTETS >= DATA_W / 4 and SEG_OCTETS <= 65536 and 2 ** clog2(SEG_OCTETS) = SEG_OCTETS
            report "tuf_rx: SEG_OCTETS must be a power of two from 2 DATA_W/8 to 65536, not " & integer'image(SEG_OCTETS)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant N_c  : positive := DATA_W / 8;
    constant LN_c : positive := clog2(N_c);
    constant TW_c : positive := 1 + 48 + 32;                 -- table word: en & key & rcv_nxt
    constant EB_AW_c : positive := clog2(SEG_OCTETS) - LN_c; -- early buffer: 2**EB_AW beats

    constant EB_IDLE_c : unsigned(1 downto 0) := "00";       -- the early buffer is free
    constant EB_FILL_c : unsigned(1 downto 0) := "01";       -- a candidate's beats being copied in
    constant EB_WAIT_c : unsigned(1 downto 0) := "10";       -- copied: waiting for its trailer's check
    constant EB_READ_c : unsigned(1 downto 0) := "11";       -- its ULPDU going out on m_early

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(N_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype st_t is unsigned(2 downto 0);
    subtype code_t is std_ulogic_vector(2 downto 0);

    constant S_IDLE_c  : st_t := "000";                      -- waiting for a segment's first beat
    constant S_LOOK_c  : st_t := "001";                      -- classifying it
    constant S_PASS_c  : st_t := "010";                      -- a taken segment's beats
    constant S_FLUSH_c : st_t := "011";                      -- its piece's last beat, from the held beat
    constant S_EXC_c   : st_t := "100";                      -- an exception segment's beats

    constant R_TAKEN_c         : code_t := "000";
    constant R_NOT_ENABLED_c   : code_t := "001";
    constant R_IN_ERROR_c      : code_t := "010";
    constant R_OUT_OF_ORDER_c  : code_t := "011";
    constant R_DUPLICATE_c     : code_t := "100";
    constant R_EMPTY_c         : code_t := "101";
    constant R_NOT_CONTAINED_c : code_t := "110";

    constant V_GOOD_c : code_t := "000";
    constant V_CRC_c  : code_t := "010";

    -- registers
    signal state_reg     : st_t := S_IDLE_c;
    signal h_data_reg    : data_t := (others => '0');        -- the first beat, then the last beat taken
    signal h_keep_reg    : keep_t := (others => '0');
    signal h_last_reg    : std_ulogic := '0';
    signal conn_reg      : conn_t := (others => '0');
    signal seq_reg       : unsigned(31 downto 0) := (others => '0');
    signal len_reg       : unsigned(15 downto 0) := (others => '0');
    signal j_reg         : unsigned(15 downto 0) := (others => '0');
    signal ob_reg        : unsigned(15 downto 0) := (others => '0');
    signal ulen_reg      : unsigned(15 downto 0) := (others => '0');
    signal lkeep_reg     : keep_t := (others => '0');
    signal field_reg     : std_ulogic_vector(31 downto 0) := (others => '0');

    signal mp_valid_reg  : std_ulogic := '0';
    signal mp_data_reg   : data_t := (others => '0');
    signal mp_keep_reg   : keep_t := (others => '0');
    signal mp_last_reg   : std_ulogic := '0';
    signal mp_user_reg   : std_ulogic_vector(CONN_W + 17 downto 0) := (others => '0');

    signal mx_valid_reg  : std_ulogic := '0';
    signal mx_data_reg   : data_t := (others => '0');
    signal mx_keep_reg   : keep_t := (others => '0');
    signal mx_last_reg   : std_ulogic := '0';
    signal mx_user_reg   : std_ulogic_vector(CONN_W + 50 downto 0) := (others => '0');

    signal v_valid_reg   : std_ulogic := '0';
    signal v_code_reg    : code_t := (others => '0');
    signal v_conn_reg    : conn_t := (others => '0');
    signal pdone_reg     : unsigned(4 downto 0) := (others => '0');
    signal vdone_reg     : unsigned(4 downto 0) := (others => '0');

    signal fail_hold_reg : std_ulogic := '0';
    signal fail_conn_reg : conn_t := (others => '0');

    signal early_reg     : std_ulogic := '0';
    signal eb_state_reg  : unsigned(1 downto 0) := EB_IDLE_c;
    signal er_issue_reg  : std_ulogic := '0';
    signal er_addr_reg   : unsigned(EB_AW_c - 1 downto 0) := (others => '0');
    signal er_k_reg      : unsigned(15 downto 0) := (others => '0');
    signal er_prev_reg   : data_t := (others => '0');
    signal e_seq_reg     : std_ulogic_vector(31 downto 0) := (others => '0');
    signal e_ulen_reg    : unsigned(15 downto 0) := (others => '0');
    signal e_ob_reg      : unsigned(15 downto 0) := (others => '0');
    signal e_lkeep_reg   : keep_t := (others => '0');
    signal e_conn_reg    : conn_t := (others => '0');

    signal me_valid_reg  : std_ulogic := '0';
    signal me_data_reg   : data_t := (others => '0');
    signal me_keep_reg   : keep_t := (others => '0');
    signal me_last_reg   : std_ulogic := '0';
    signal me_user_reg   : std_ulogic_vector(CONN_W + 47 downto 0) := (others => '0');

    signal sk_valid_reg  : std_ulogic := '0';
    signal sk_conn_reg   : conn_t := (others => '0');
    signal sk_seq_reg    : std_ulogic_vector(31 downto 0) := (others => '0');
    signal sk_reason_reg : std_ulogic_vector(1 downto 0) := (others => '0');

    -- tables
    signal t_rd      : std_logic_vector(TW_c - 1 downto 0);
    signal e_rd      : std_logic_vector(0 downto 0);
    signal take0     : std_ulogic;
    signal t_wr      : std_ulogic;
    signal t_wr_data : std_ulogic_vector(TW_c - 1 downto 0);
    signal t_wr_addr : conn_t;
    signal e_wr      : std_ulogic;
    signal e_wr_addr : conn_t;
    signal e_wr_data : std_ulogic_vector(0 downto 0);
    signal s_conn    : std_logic_vector(CONN_W - 1 downto 0);

    -- classification
    signal t_en        : std_ulogic;
    signal t_key       : std_ulogic_vector(47 downto 0);
    signal t_nxt       : unsigned(31 downto 0);
    signal hdr_len     : unsigned(15 downto 0);
    signal hdr_key     : std_ulogic_vector(47 downto 0);
    signal d_start     : unsigned(31 downto 0);
    signal d_end       : unsigned(31 downto 0);
    signal contained   : std_ulogic;
    signal form_ok     : std_ulogic;
    signal early_try, early_fit, early_go : std_ulogic;
    signal look_reason : code_t;
    signal look_take   : std_ulogic;
    signal look_ulen   : unsigned(15 downto 0);
    signal look_ob     : unsigned(15 downto 0);
    signal look_lkeep  : keep_t;

    -- CRC and trailers
    signal c_ready, c_valid, c_last : std_ulogic;
    signal c_data      : data_t;
    signal c_j         : unsigned(15 downto 0);
    signal c_keep      : keep_t;
    signal crc_tdata   : std_logic_vector(31 downto 0);
    signal crc_tid     : std_logic_vector(CONN_W - 1 downto 0);
    signal crc_tvalid  : std_logic;
    signal v_pop       : std_ulogic;
    signal f_in_ready  : std_logic;
    signal f_out       : std_logic_vector(31 downto 0);
    signal f_out_valid : std_logic;
    signal field_next  : std_ulogic_vector(31 downto 0);
    signal f_push      : std_ulogic;
    signal c_early     : std_ulogic;
    signal e_pop       : std_ulogic;
    signal f_in        : std_ulogic_vector(32 downto 0);
    signal f_out_all   : std_logic_vector(32 downto 0);
    signal f_out_early : std_ulogic;
    signal crc_ready   : std_ulogic;

    -- early buffer
    signal eb_wr       : std_ulogic;
    signal eb_wr_addr  : std_ulogic_vector(EB_AW_c - 1 downto 0);
    signal eb_wr_data  : data_t;
    signal eb_rd       : std_ulogic;
    signal eb_rd_data  : std_logic_vector(DATA_W - 1 downto 0);
    signal e_pair      : std_ulogic_vector(2 * DATA_W - 1 downto 0);
    signal e_shifted   : data_t;
    signal e_masked    : data_t;
    signal e_word, e_first, e_is_last, out_adv_e, e_emit, e_step : std_ulogic;

    -- FSM
    signal out_adv_p, out_adv_x, c_ok : std_ulogic;
    signal look_go, pass_go, exc_go, flush_go : std_ulogic;
    signal pair      : std_ulogic_vector(2 * DATA_W - 1 downto 0);
    signal shifted   : data_t;
    signal k_out     : unsigned(15 downto 0);
    signal k_is_last : std_ulogic;
    signal v_bad     : std_ulogic;
    signal cfg_go    : std_ulogic;
    signal cfg_ready_i : std_ulogic;

begin

    -- ---- the connection tables ----

    s_conn <= s_axis_tuser(CONN_W + 47 downto 48);

    t_ram : entity work.sdp_ram
        generic map (WIDTH => TW_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => t_wr, wr_addr => std_logic_vector(t_wr_addr), wr_data => std_logic_vector(t_wr_data),
            rd_en => take0, rd_addr => s_conn, rd_data => t_rd
        );

    e_ram : entity work.sdp_ram
        generic map (WIDTH => 1, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => e_wr, wr_addr => std_logic_vector(e_wr_addr), wr_data => std_logic_vector(e_wr_data),
            rd_en => take0, rd_addr => s_conn, rd_data => e_rd
        );

    -- ---- classification (S_LOOK) ----

    t_en <= t_rd(TW_c - 1);
    t_key <= std_ulogic_vector(t_rd(79 downto 32));
    t_nxt <= unsigned(t_rd(31 downto 0));
    -- FPDU header, draft 4.1.1: Length in octets 0-1, Key in octets 2-7.
    hdr_len <= unsigned(h_data_reg(7 downto 0) & h_data_reg(15 downto 8));
    hdr_key <= h_data_reg(23 downto 16) & h_data_reg(31 downto 24) & h_data_reg(39 downto 32) &
               h_data_reg(47 downto 40) & h_data_reg(55 downto 48) & h_data_reg(63 downto 56);
    d_start <= seq_reg - t_nxt;
    d_end <= seq_reg + resize(len_reg, 32) - t_nxt;
    form_ok <= to_sl(resize(hdr_len, 17) + 8 = resize(len_reg, 17) and hdr_key = t_key and hdr_len >= 4);
    contained <= to_sl(d_start = 0) and form_ok;
    look_reason <= R_NOT_ENABLED_c when t_en = '0' else
                   R_IN_ERROR_c when e_rd(0) = '1' else
                   R_EMPTY_c when len_reg = 0 else
                   R_OUT_OF_ORDER_c when d_start(31) = '0' and d_start /= 0 else
                   R_DUPLICATE_c when d_end(31) = '1' or d_end = 0 else
                   R_NOT_CONTAINED_c when contained = '0' else
                   R_TAKEN_c;
    look_take <= to_sl(look_reason = R_TAKEN_c);
    -- An out-of-order segment that is one whole FPDU with the key: copied
    -- for early placement when the buffer is free and it fits.
    early_try <= to_sl(look_reason = R_OUT_OF_ORDER_c) and form_ok;
    early_fit <= to_sl(resize(len_reg, 17) <= to_unsigned(SEG_OCTETS, 17));
    early_go <= early_try and early_fit and to_sl(eb_state_reg = EB_IDLE_c);
    look_ulen <= len_reg - 12;

    process (all)
        variable lk : natural;
    begin
        if look_ulen = 0 then
            look_ob <= to_unsigned(1, 16);
            lk := 0;
        else
            if look_ulen(LN_c - 1 downto 0) /= 0 then
                look_ob <= shift_right(look_ulen, LN_c) + 1;
            else
                look_ob <= shift_right(look_ulen, LN_c);
            end if;
            lk := to_integer(look_ulen(LN_c - 1 downto 0) - 1) + 1;
        end if;
        for i in 0 to N_c - 1 loop
            look_lkeep(i) <= to_sl(i < lk);
        end loop;
    end process;

    -- ---- CRC32c of header and ULPDU, and the pending trailers ----

    crc : entity work.crc32c
        generic map (DATA_W => DATA_W, ID_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => std_logic_vector(c_data), s_axis_tkeep => std_logic_vector(c_keep),
            s_axis_tvalid => c_valid, s_axis_tready => c_ready, s_axis_tlast => c_last,
            s_axis_tid => std_logic_vector(conn_reg), s_axis_tuser => (0 => '1', others => '0'),
            m_axis_crc_tdata => crc_tdata, m_axis_crc_tid => crc_tid, m_axis_crc_tvalid => crc_tvalid,
            m_axis_crc_tready => crc_ready
        );

    crc_ready <= v_pop or e_pop;
    f_push <= c_valid and c_last;
    f_in <= c_early & field_next;
    f_out <= f_out_all(31 downto 0);
    f_out_early <= f_out_all(32);

    trailers : entity work.ddp_rx_fifo
        generic map (WIDTH => 33, AW => 4)
        port map (
            clk => clk, rst => rst,
            in_data => std_logic_vector(f_in), in_valid => f_push, in_ready => f_in_ready,
            in_data2 => std_logic_vector(f_in), in_valid2 => '0', in_ready2 => open,
            out_data => f_out_all, out_valid => f_out_valid, out_ready => crc_ready
        );

    -- The CRC covers the octets before the trailer: positions < len - 4.
    process (all)
        variable rem_v : unsigned(31 downto 0);
    begin
        rem_v := resize(len_reg, 32) - 4 - shift_left(resize(c_j, 32), LN_c);
        for i in 0 to N_c - 1 loop
            c_keep(i) <= not rem_v(31) and to_sl(rem_v > to_unsigned(i, 32));
        end loop;
    end process;

    -- Trailer octet t sits at position len - 4 + t: in beat (pos >> LN), lane pos mod N.
    process (all)
        variable pos  : unsigned(16 downto 0);
        variable lane : natural;
        variable f    : std_ulogic_vector(31 downto 0);
    begin
        f := field_reg;
        for t in 0 to 3 loop
            pos := resize(len_reg, 17) - 4 + t;
            if shift_right(pos, LN_c) = resize(c_j, 17) then
                lane := to_integer(pos(LN_c - 1 downto 0));
                f(8 * t + 7 downto 8 * t) := c_data(8 * lane + 7 downto 8 * lane);
            end if;
        end loop;
        field_next <= f;
    end process;

    -- ---- the FSM ----

    out_adv_p <= not mp_valid_reg or m_axis_tready;
    out_adv_x <= not mx_valid_reg or m_exc_tready;
    c_ok <= c_ready and f_in_ready;

    look_go <= to_sl(state_reg = S_LOOK_c) and
               ((look_take and c_ok) or (not look_take and out_adv_x and (not early_go or c_ok)));
    pass_go <= to_sl(state_reg = S_PASS_c) and out_adv_p and c_ok and s_axis_tvalid;
    exc_go <= to_sl(state_reg = S_EXC_c) and out_adv_x and s_axis_tvalid and (not early_reg or c_ok);
    flush_go <= to_sl(state_reg = S_FLUSH_c) and out_adv_p;

    take0 <= to_sl(state_reg = S_IDLE_c) and s_axis_tvalid and not cfg_valid;
    s_axis_tready <= (to_sl(state_reg = S_IDLE_c) and not cfg_valid) or pass_go or exc_go;

    c_valid <= (look_go and (look_take or early_go)) or pass_go or (exc_go and early_reg);
    c_early <= not look_take when state_reg = S_LOOK_c else to_sl(state_reg = S_EXC_c);
    c_data <= h_data_reg when state_reg = S_LOOK_c else std_ulogic_vector(s_axis_tdata);
    c_j <= (others => '0') when state_reg = S_LOOK_c else j_reg;
    c_last <= h_last_reg when state_reg = S_LOOK_c else s_axis_tlast;

    -- A piece's beat k is octets 8 + kN .. of the segment.
    pair <= (DATA_W - 1 downto 0 => '0') & h_data_reg when state_reg = S_FLUSH_c else
            std_ulogic_vector(s_axis_tdata) & h_data_reg;
    shifted <= pair(DATA_W + 63 downto 64);
    k_out <= j_reg - 1;
    k_is_last <= to_sl(k_out = ob_reg - 1);

    v_bad <= to_sl(crc_tdata /= f_out);
    v_pop <= crc_tvalid and f_out_valid and not f_out_early and to_sl(pdone_reg /= vdone_reg) and
             (not v_valid_reg or m_verdict_tready);
    -- An early candidate's check: its copy is complete by then (EB_WAIT).
    e_pop <= crc_tvalid and f_out_valid and f_out_early;

    -- ---- the early buffer and its readout ----

    eb_wr <= (look_go and early_go) or (exc_go and early_reg);
    eb_wr_addr <= (others => '0') when state_reg = S_LOOK_c else std_ulogic_vector(j_reg(EB_AW_c - 1 downto 0));
    eb_wr_data <= h_data_reg when state_reg = S_LOOK_c else std_ulogic_vector(s_axis_tdata);
    eb_rd <= to_sl(eb_state_reg = EB_READ_c) and er_issue_reg;

    eb_ram : entity work.sdp_ram
        generic map (WIDTH => DATA_W, ADDR_W => EB_AW_c)
        port map (
            clk => clk,
            wr_en => eb_wr, wr_addr => std_logic_vector(eb_wr_addr), wr_data => std_logic_vector(eb_wr_data),
            rd_en => eb_rd, rd_addr => std_logic_vector(er_addr_reg), rd_data => eb_rd_data
        );

    -- EB_READ alternates: a read goes out (er_issue), then its word is in.
    e_pair <= std_ulogic_vector(eb_rd_data) & er_prev_reg;
    e_shifted <= e_pair(DATA_W + 63 downto 64);
    e_word <= to_sl(eb_state_reg = EB_READ_c) and not er_issue_reg;
    e_first <= to_sl(er_k_reg = 0);
    e_is_last <= to_sl(er_k_reg = e_ob_reg);
    out_adv_e <= not me_valid_reg or m_early_tready;
    e_emit <= e_word and not e_first and out_adv_e;
    e_step <= e_word and (e_first or out_adv_e);

    process (all)
    begin
        for i in 0 to N_c - 1 loop
            if e_is_last = '0' or e_lkeep_reg(i) = '1' then
                e_masked(8 * i + 7 downto 8 * i) <= e_shifted(8 * i + 7 downto 8 * i);
            else
                e_masked(8 * i + 7 downto 8 * i) <= (others => '0');
            end if;
        end loop;
    end process;
    cfg_ready_i <= to_sl(state_reg = S_IDLE_c) and not (v_pop and v_bad) and not fail_hold_reg;
    cfg_ready <= cfg_ready_i;
    cfg_go <= cfg_valid and cfg_ready_i;
    fail_ready <= not fail_hold_reg;

    t_wr <= cfg_go or (look_go and look_take);
    t_wr_addr <= std_ulogic_vector(cfg_conn) when cfg_go = '1' else conn_reg;
    t_wr_data <= std_ulogic_vector(cfg_en & cfg_key & cfg_base) when cfg_go = '1' else
                 '1' & t_key & std_ulogic_vector(seq_reg + resize(len_reg, 32));
    e_wr <= (v_pop and v_bad) or fail_hold_reg or cfg_go;
    e_wr_addr <= std_ulogic_vector(crc_tid) when (v_pop and v_bad) = '1' else
                 fail_conn_reg when fail_hold_reg = '1' else std_ulogic_vector(cfg_conn);
    e_wr_data(0) <= (v_pop and v_bad) or fail_hold_reg;

    process (clk)
    begin
        if rising_edge(clk) then
            if mx_valid_reg = '1' and m_exc_tready = '1' then
                mx_valid_reg <= '0';
            end if;
            if mp_valid_reg = '1' and m_axis_tready = '1' then
                mp_valid_reg <= '0';
            end if;
            if take0 = '1' then
                h_data_reg <= std_ulogic_vector(s_axis_tdata);
                h_keep_reg <= std_ulogic_vector(s_axis_tkeep);
                h_last_reg <= s_axis_tlast;
                conn_reg <= std_ulogic_vector(s_axis_tuser(CONN_W + 47 downto 48));
                seq_reg <= unsigned(s_axis_tuser(47 downto 16));
                len_reg <= unsigned(s_axis_tuser(15 downto 0));
                state_reg <= S_LOOK_c;
            end if;
            if look_go = '1' then
                ulen_reg <= look_ulen;
                ob_reg <= look_ob;
                lkeep_reg <= look_lkeep;
                j_reg <= to_unsigned(1, 16);
                early_reg <= early_go;
                if early_go = '1' then
                    field_reg <= field_next;
                    if h_last_reg = '1' then
                        eb_state_reg <= EB_WAIT_c;
                    else
                        eb_state_reg <= EB_FILL_c;
                    end if;
                    e_seq_reg <= std_ulogic_vector(seq_reg);
                    e_ulen_reg <= look_ulen;
                    e_ob_reg <= look_ob;
                    e_lkeep_reg <= look_lkeep;
                    e_conn_reg <= conn_reg;
                end if;
                if (early_try and not early_go) = '1' then
                    sk_conn_reg <= conn_reg;
                    sk_seq_reg <= std_ulogic_vector(seq_reg);
                    if early_fit = '1' then
                        sk_reason_reg <= "01";
                    else
                        sk_reason_reg <= "10";
                    end if;
                end if;
                if look_take = '1' then
                    field_reg <= field_next;
                    if h_last_reg = '1' then
                        state_reg <= S_FLUSH_c;
                    else
                        state_reg <= S_PASS_c;
                    end if;
                else
                    mx_valid_reg <= '1';
                    mx_data_reg <= h_data_reg;
                    mx_keep_reg <= h_keep_reg;
                    mx_last_reg <= h_last_reg;
                    mx_user_reg <= conn_reg & std_ulogic_vector(seq_reg) & std_ulogic_vector(len_reg) & look_reason;
                    if h_last_reg = '1' then
                        state_reg <= S_IDLE_c;
                    else
                        state_reg <= S_EXC_c;
                    end if;
                end if;
            end if;
            if exc_go = '1' then
                mx_valid_reg <= '1';
                mx_data_reg <= std_ulogic_vector(s_axis_tdata);
                mx_keep_reg <= std_ulogic_vector(s_axis_tkeep);
                mx_last_reg <= s_axis_tlast;
                if s_axis_tlast = '1' then
                    state_reg <= S_IDLE_c;
                end if;
                if early_reg = '1' then
                    field_reg <= field_next;
                    j_reg <= j_reg + 1;
                    if s_axis_tlast = '1' then
                        eb_state_reg <= EB_WAIT_c;
                    end if;
                end if;
            end if;
            if pass_go = '1' then
                field_reg <= field_next;
                h_data_reg <= std_ulogic_vector(s_axis_tdata);
                j_reg <= j_reg + 1;
                if k_out < ob_reg then
                    mp_valid_reg <= '1';
                    mp_data_reg <= shifted;
                    if k_is_last = '1' then
                        mp_keep_reg <= lkeep_reg;
                    else
                        mp_keep_reg <= (others => '1');
                    end if;
                    mp_last_reg <= k_is_last;
                    mp_user_reg <= std_ulogic_vector(ulen_reg) & conn_reg & '1' & k_is_last;
                end if;
                if s_axis_tlast = '1' then
                    if j_reg < ob_reg then
                        state_reg <= S_FLUSH_c;
                    else
                        state_reg <= S_IDLE_c;
                    end if;
                end if;
            end if;
            if flush_go = '1' then
                mp_valid_reg <= '1';
                mp_data_reg <= shifted;
                mp_keep_reg <= lkeep_reg;
                mp_last_reg <= '1';
                mp_user_reg <= std_ulogic_vector(ulen_reg) & conn_reg & "11";
                state_reg <= S_IDLE_c;
            end if;
            if mp_valid_reg = '1' and m_axis_tready = '1' and mp_last_reg = '1' then
                pdone_reg <= pdone_reg + 1;
            end if;
            if v_valid_reg = '1' and m_verdict_tready = '1' then
                v_valid_reg <= '0';
            end if;
            if v_pop = '1' then
                v_valid_reg <= '1';
                if v_bad = '1' then
                    v_code_reg <= V_CRC_c;
                else
                    v_code_reg <= V_GOOD_c;
                end if;
                v_conn_reg <= std_ulogic_vector(crc_tid);
                vdone_reg <= vdone_reg + 1;
            end if;
            -- The early buffer: the check, then the readout.
            if e_pop = '1' then
                if v_bad = '1' then
                    eb_state_reg <= EB_IDLE_c;
                else
                    eb_state_reg <= EB_READ_c;
                    er_issue_reg <= '1';
                    er_addr_reg <= (others => '0');
                    er_k_reg <= (others => '0');
                end if;
            end if;
            if eb_rd = '1' then
                er_issue_reg <= '0';
            end if;
            if me_valid_reg = '1' and m_early_tready = '1' then
                me_valid_reg <= '0';
            end if;
            if e_step = '1' then
                er_prev_reg <= std_ulogic_vector(eb_rd_data);
                er_k_reg <= er_k_reg + 1;
                er_addr_reg <= er_addr_reg + 1;
                er_issue_reg <= '1';
                if e_first = '0' and e_is_last = '1' then
                    eb_state_reg <= EB_IDLE_c;
                    er_issue_reg <= '0';
                end if;
            end if;
            if e_emit = '1' then
                me_valid_reg <= '1';
                me_data_reg <= e_masked;
                if e_is_last = '1' then
                    me_keep_reg <= e_lkeep_reg;
                else
                    me_keep_reg <= (others => '1');
                end if;
                me_last_reg <= e_is_last;
                me_user_reg <= e_seq_reg & std_ulogic_vector(e_ulen_reg) & e_conn_reg;
            end if;
            sk_valid_reg <= look_go and early_try and not early_go;
            if fail_valid = '1' and fail_hold_reg = '0' then
                fail_hold_reg <= '1';
                fail_conn_reg <= std_ulogic_vector(fail_conn);
            elsif (v_pop and v_bad) = '0' then
                fail_hold_reg <= '0';
            end if;
            if rst = '1' then
                state_reg <= S_IDLE_c;
                mp_valid_reg <= '0';
                mx_valid_reg <= '0';
                v_valid_reg <= '0';
                pdone_reg <= (others => '0');
                vdone_reg <= (others => '0');
                fail_hold_reg <= '0';
                early_reg <= '0';
                eb_state_reg <= EB_IDLE_c;
                er_issue_reg <= '0';
                me_valid_reg <= '0';
                sk_valid_reg <= '0';
            end if;
        end if;
    end process;

    m_axis_tdata <= std_logic_vector(mp_data_reg);
    m_axis_tkeep <= std_logic_vector(mp_keep_reg);
    m_axis_tvalid <= mp_valid_reg;
    m_axis_tlast <= mp_last_reg;
    m_axis_tuser <= std_logic_vector(mp_user_reg);
    m_verdict_tdata <= std_logic_vector(v_code_reg);
    m_verdict_tvalid <= v_valid_reg;
    m_verdict_tuser <= std_logic_vector(v_conn_reg);
    m_exc_tdata <= std_logic_vector(mx_data_reg);
    m_exc_tkeep <= std_logic_vector(mx_keep_reg);
    m_exc_tvalid <= mx_valid_reg;
    m_exc_tlast <= mx_last_reg;
    m_exc_tuser <= std_logic_vector(mx_user_reg);
    m_early_tdata <= std_logic_vector(me_data_reg);
    m_early_tkeep <= std_logic_vector(me_keep_reg);
    m_early_tvalid <= me_valid_reg;
    m_early_tlast <= me_last_reg;
    m_early_tuser <= std_logic_vector(me_user_reg);
    m_skip_valid <= sk_valid_reg;
    m_skip_conn <= std_logic_vector(sk_conn_reg);
    m_skip_seq <= std_logic_vector(sk_seq_reg);
    m_skip_reason <= std_logic_vector(sk_reason_reg);
    early_busy <= to_sl(eb_state_reg /= EB_IDLE_c) or me_valid_reg;

end architecture rtl;
