-- mpa_tx_mark: second stage of the MPA transmitter (mpa_tx). It inserts MPA
-- markers into FPDUs framed by mpa_tx_frame, at every 512 octets of TCP
-- sequence space from the connection's marker base (RFC 5044 4.3), and keeps
-- each connection's place in that grid in a table.
--
-- VHDL-2008 twin of hw/rtl/mpa_tx_mark.v: same generics, same ports, same
-- registers and clock counts (the Verilog header explains the design in
-- full). In brief: FPDUs are multiples of four octets and markers sit at
-- multiples of 512 from the base, so the block works on 32-bit words; a
-- marker is one word every 128, its FPDUPTR (RFC 5044 4.2) the words from
-- the FPDU's header, {markers so far, words to the first grid point}, times
-- four. A marker that falls where an FPDU starts has FPDUPTR 0 and leads
-- that FPDU.
--
-- Input, s_axis: frames from mpa_tx_frame with tfirst and tcrcw, tuser =
-- crc_en & mrk_en & conn. A frame with mrk_en low passes unchanged.
--
-- Connection table: per conn, the words to its next marker position, in an
-- sdp_ram; cfg_valid/cfg_ready/cfg_conn/cfg_pos set it, cfg_pos = ((next
-- sequence number - marker base) mod 512) / 4. cfg_ready is low only in a
-- clock where a frame's end updates the table.
--
-- Output, m_axis: the frames with markers, lane-0 aligned; tuser as it came
-- in; tcrcw marks the CRC placeholder word.
--
-- Throughput: one beat per clock out. Latency: 3 clocks (input register,
-- insertion, merge).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_tx_mark is
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
        s_axis_tuser  : in  std_logic_vector(CONN_W + 1 downto 0) := (others => '0');
        s_axis_tfirst : in  std_logic := '0';
        s_axis_tcrcw  : in  std_logic_vector(DATA_W / 32 - 1 downto 0) := (others => '0');

        cfg_valid     : in  std_logic := '0';
        cfg_ready     : out std_logic;
        cfg_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_pos       : in  std_logic_vector(6 downto 0) := (others => '0');

        m_axis_tdata  : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep  : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid : out std_logic;
        m_axis_tready : in  std_logic := '0';
        m_axis_tlast  : out std_logic;
        m_axis_tuser  : out std_logic_vector(CONN_W + 1 downto 0);
        m_axis_tcrcw  : out std_logic_vector(DATA_W / 32 - 1 downto 0)
    );
end entity mpa_tx_mark;

architecture rtl of mpa_tx_mark is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_tx_mark: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c      : positive := DATA_W / 8;
    constant WPB_c    : positive := DATA_W / 32;          -- words per beat
    constant N_W_c    : positive := clog2(WPB_c) + 1;     -- a word count 0 .. WPB
    constant E_W_c    : positive := clog2(WPB_c + 1) + 1; -- a word count 0 .. WPB + 1 and more
    constant USER_W_c : positive := CONN_W + 2;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype crcw_t is std_ulogic_vector(WPB_c - 1 downto 0);
    subtype user_t is std_ulogic_vector(USER_W_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype ewords_t is std_ulogic_vector(32 * (WPB_c + 1) - 1 downto 0);
    subtype n_t is unsigned(N_W_c - 1 downto 0);
    subtype e_t is unsigned(E_W_c - 1 downto 0);
    subtype seven_t is unsigned(6 downto 0);

    -- The first 4 * words lanes.
    function word_keep(words : natural) return keep_t is
        variable k : keep_t;
    begin
        for j in 0 to L_c - 1 loop
            if j < 4 * words then
                k(j) := '1';
            else
                k(j) := '0';
            end if;
        end loop;
        return k;
    end function word_keep;

    -- --- b0: input register, and the table read for a frame's first beat ---

    signal b0_valid_reg  : std_ulogic := '0';
    signal b0_data_reg   : data_t := (others => '0');
    signal b0_n_reg      : n_t := (others => '0');
    signal b0_last_reg   : std_ulogic := '0';
    signal b0_first_reg  : std_ulogic := '0';
    signal b0_crcw_reg   : crcw_t := (others => '0');
    signal b0_user_reg   : user_t := (others => '0');
    signal b0_bypass_reg : std_ulogic := '0';     -- first beat: continue from togo
    signal b0_c0_reg     : unsigned(7 downto 0) := (others => '0');  -- 128 - n
    signal b0_c1_reg     : seven_t := (others => '0');               -- 127 - n
    signal b0_n1_reg     : e_t := (others => '0');                   -- n + 1
    signal b0_nt_reg     : crcw_t := (others => '0');                -- b0_nt(x): x < n

    signal s_ready, b0_load, b1_take : std_ulogic;
    signal s_n : n_t;

    signal ram_q     : std_logic_vector(6 downto 0);
    signal tbl_we    : std_ulogic;
    signal tbl_waddr : std_logic_vector(CONN_W - 1 downto 0);
    signal tbl_wdata : std_logic_vector(6 downto 0);
    signal tbl_re    : std_ulogic;

    -- --- b1: marker insertion ---

    signal togo_reg      : seven_t := (others => '0');  -- words to the next marker position
    signal t0_reg        : seven_t := (others => '0');  -- FPDUPTR of the first marker after the header, words
    signal mk_reg        : seven_t := (others => '0');  -- markers after the header so far
    signal inc_pend_reg  : std_ulogic := '0';
    signal have_last_reg : std_ulogic := '0';
    signal last_conn_reg : conn_t := (others => '0');

    signal b1_valid_reg : std_ulogic := '0';
    signal b1_e_reg     : ewords_t := (others => '0');
    signal b1_ne_reg    : e_t := (others => '0');
    signal b1_crcw_reg  : std_ulogic_vector(WPB_c downto 0) := (others => '0');
    signal b1_last_reg  : std_ulogic := '0';
    signal b1_user_reg  : user_t := (others => '0');

    signal b2_take, b1_ready : std_ulogic;
    signal conn0 : conn_t;
    signal mrk0, use_ram, no_mark, do_mark, lead, end_upd : std_ulogic;
    signal togo_cur, togo_next, t0_cur, mk_use : seven_t;
    signal marker_word : std_ulogic_vector(31 downto 0);
    signal e : ewords_t;
    signal e_crcw : std_ulogic_vector(WPB_c downto 0);

    -- --- b2: merge with the words held over from the beat before ---

    signal m_data_reg  : data_t := (others => '0');
    signal m_keep_reg  : keep_t := (others => '0');
    signal m_valid_reg : std_ulogic := '0';
    signal m_last_reg  : std_ulogic := '0';
    signal m_user_reg  : user_t := (others => '0');
    signal m_crcw_reg  : crcw_t := (others => '0');

    signal hold_reg      : data_t := (others => '0');
    signal hold_crcw_reg : crcw_t := (others => '0');
    signal h_reg         : n_t := (others => '0');    -- words held, 0 .. WPB
    signal hold_last_reg : std_ulogic := '0';         -- the held words end a frame
    signal hold_user_reg : user_t := (others => '0');
    -- h = WPB or hold_last, kept beside them (mpa_tx_mark.v says why).
    signal flush_reg     : std_ulogic := '0';

    signal out_load : std_ulogic;
    signal comb : std_ulogic_vector(32 * 2 * WPB_c - 1 downto 0);
    signal comb_crcw : std_ulogic_vector(2 * WPB_c - 1 downto 0);
    signal total : unsigned(E_W_c downto 0);

begin

    m_axis_tdata <= m_data_reg;
    m_axis_tkeep <= m_keep_reg;
    m_axis_tvalid <= m_valid_reg;
    m_axis_tlast <= m_last_reg;
    m_axis_tuser <= m_user_reg;
    m_axis_tcrcw <= m_crcw_reg;

    -- --- b0 -----------------------------------------------------------------

    s_ready <= (not b0_valid_reg) or b1_take;
    s_axis_tready <= s_ready;
    b0_load <= s_axis_tvalid and s_ready;

    p_s_n : process (all) is
        variable n : n_t;
    begin
        n := (others => '0');
        for i in 0 to WPB_c - 1 loop
            if s_axis_tkeep(4 * i) = '1' then
                n := to_unsigned(i + 1, N_W_c);
            end if;
        end loop;
        s_n <= n;
    end process p_s_n;

    tbl_re <= b0_load and s_axis_tfirst;

    togo_table : entity work.sdp_ram
        generic map (WIDTH => 7, ADDR_W => CONN_W, LUTRAM => 1)
        port map (
            clk => clk,
            wr_en => tbl_we,
            wr_addr => tbl_waddr,
            wr_data => tbl_wdata,
            rd_en => tbl_re,
            rd_addr => s_axis_tuser(CONN_W - 1 downto 0),
            rd_data => ram_q
        );

    -- --- b1 -----------------------------------------------------------------

    b1_ready <= (not b1_valid_reg) or b2_take;
    b1_take <= b0_valid_reg and b1_ready;

    conn0 <= b0_user_reg(CONN_W - 1 downto 0);
    mrk0 <= b0_user_reg(CONN_W);
    use_ram <= b0_first_reg and not b0_bypass_reg;

    -- togo - n, plus 128 when togo < n: the carry out says whether a marker
    -- falls in this beat, and the marker's word moves the next one on by one.
    p_togo : process (all) is
        variable cur : seven_t;
        variable sum0 : unsigned(7 downto 0);
        variable sum1 : seven_t;
    begin
        if use_ram = '1' then
            cur := unsigned(ram_q);
        else
            cur := togo_reg;
        end if;
        sum0 := ('0' & cur) + b0_c0_reg;
        sum1 := cur + b0_c1_reg;
        togo_cur <= cur;
        no_mark <= sum0(7);
        if sum0(7) = '1' then
            togo_next <= sum0(6 downto 0);
        else
            togo_next <= sum1;
        end if;
    end process p_togo;

    do_mark <= mrk0 and not no_mark;
    lead <= '1' when b0_first_reg = '1' and togo_cur = 0 else '0';
    t0_cur <= togo_cur when b0_first_reg = '1' else t0_reg;
    mk_use <= (others => '0') when b0_first_reg = '1' else mk_reg;

    p_marker : process (all) is
        variable fpduptr : std_ulogic_vector(15 downto 0);
    begin
        if lead = '1' then
            fpduptr := (others => '0');
        else
            fpduptr := std_ulogic_vector(mk_use) & std_ulogic_vector(t0_cur) & "00";
        end if;
        marker_word <= fpduptr(7 downto 0) & fpduptr(15 downto 8) & x"0000";
    end process p_marker;

    -- The marker goes before word togo when togo < n; the words from togo
    -- on move up one.
    p_e : process (all) is
        variable d_ext : std_ulogic_vector(32 * (WPB_c + 2) - 1 downto 0);
        variable c_ext, nt_ext : std_ulogic_vector(WPB_c + 1 downto 0);
        variable tc : natural;
    begin
        d_ext := x"00000000" & b0_data_reg & x"00000000";
        c_ext := '0' & b0_crcw_reg & '0';
        nt_ext := '0' & b0_nt_reg & '0';
        tc := to_integer(togo_cur);
        for x in 0 to WPB_c loop
            if mrk0 = '1' and nt_ext(x + 1) = '1' and x = tc then
                e(32 * x + 31 downto 32 * x) <= marker_word;
                e_crcw(x) <= '0';
            elsif mrk0 = '1' and x > tc and nt_ext(x) = '1' then
                e(32 * x + 31 downto 32 * x) <= d_ext(32 * x + 31 downto 32 * x);
                e_crcw(x) <= c_ext(x);
            else
                e(32 * x + 31 downto 32 * x) <= d_ext(32 * x + 63 downto 32 * x + 32);
                e_crcw(x) <= c_ext(x + 1);
            end if;
        end loop;
    end process p_e;

    end_upd <= b1_take and b0_last_reg and mrk0;
    tbl_we <= (cfg_valid and not end_upd) or end_upd;
    tbl_waddr <= conn0 when end_upd = '1' else cfg_conn;
    tbl_wdata <= std_logic_vector(togo_next) when end_upd = '1'
                 else std_logic_vector(0 - unsigned(cfg_pos));
    cfg_ready <= not end_upd;

    -- --- b2 -----------------------------------------------------------------

    out_load <= (not m_valid_reg) or m_axis_tready;
    b2_take <= b1_valid_reg and out_load and not flush_reg;

    -- Word k of the result is held word k for k < h, else expanded word
    -- k - h (zero past the expanded words).
    p_comb : process (all) is
        variable hn : natural;
    begin
        hn := to_integer(h_reg);
        for k in 0 to 2 * WPB_c - 1 loop
            if k < hn then
                comb(32 * k + 31 downto 32 * k) <= hold_reg(32 * k + 31 downto 32 * k);
                comb_crcw(k) <= hold_crcw_reg(k);
            elsif k - hn <= WPB_c then
                comb(32 * k + 31 downto 32 * k) <= b1_e_reg(32 * (k - hn) + 31 downto 32 * (k - hn));
                comb_crcw(k) <= b1_crcw_reg(k - hn);
            else
                comb(32 * k + 31 downto 32 * k) <= (others => '0');
                comb_crcw(k) <= '0';
            end if;
        end loop;
    end process p_comb;

    total <= resize(h_reg, E_W_c + 1) + resize(b1_ne_reg, E_W_c + 1);

    -- --- registers ------------------------------------------------------------

    p_reg : process (clk) is
        variable bypass : std_ulogic;
    begin
        if rising_edge(clk) then
            -- b0
            if b1_take = '1' then
                b0_valid_reg <= '0';
            end if;
            if b0_load = '1' then
                b0_valid_reg <= '1';
                b0_data_reg <= s_axis_tdata;
                b0_n_reg <= s_n;
                b0_last_reg <= s_axis_tlast;
                b0_first_reg <= s_axis_tfirst;
                b0_crcw_reg <= s_axis_tcrcw;
                b0_user_reg <= s_axis_tuser;
                b0_c0_reg <= 128 - resize(s_n, 8);
                b0_c1_reg <= 127 - resize(s_n, 7);
                b0_n1_reg <= resize(s_n, E_W_c) + 1;
                for i in 0 to WPB_c - 1 loop
                    b0_nt_reg(i) <= s_axis_tkeep(4 * i);
                end loop;
                -- A frame of the connection whose frame ended last continues
                -- from the togo register: the table may not have its new
                -- value yet.
                bypass := '0';
                if b1_take = '1' and b0_last_reg = '1' then
                    if b0_user_reg(CONN_W) = '1'
                        and b0_user_reg(CONN_W - 1 downto 0) = s_axis_tuser(CONN_W - 1 downto 0) then
                        bypass := '1';
                    end if;
                elsif have_last_reg = '1' and last_conn_reg = s_axis_tuser(CONN_W - 1 downto 0) then
                    bypass := '1';
                end if;
                b0_bypass_reg <= bypass;
            end if;

            -- b1
            if b2_take = '1' then
                b1_valid_reg <= '0';
            end if;
            if b1_take = '1' then
                b1_valid_reg <= '1';
                b1_e_reg <= e;
                if do_mark = '1' then
                    b1_ne_reg <= b0_n1_reg;
                else
                    b1_ne_reg <= resize(b0_n_reg, E_W_c);
                end if;
                b1_crcw_reg <= e_crcw;
                b1_last_reg <= b0_last_reg;
                b1_user_reg <= b0_user_reg;
                togo_reg <= togo_next;
                if b0_first_reg = '1' then
                    if lead = '1' then
                        t0_reg <= to_unsigned(127, 7);
                    else
                        t0_reg <= togo_cur;
                    end if;
                end if;
                -- Markers are 127 words apart, never in two beats running,
                -- so mk may count each one a beat late.
                if b0_first_reg = '1' then
                    mk_reg <= (others => '0');
                elsif inc_pend_reg = '1' then
                    mk_reg <= mk_reg + 1;
                end if;
                inc_pend_reg <= do_mark and not lead;
                if b0_last_reg = '1' then
                    have_last_reg <= mrk0;
                    last_conn_reg <= conn0;
                end if;
            end if;
            if cfg_valid = '1' and end_upd = '0' and cfg_conn = last_conn_reg then
                have_last_reg <= '0';
            end if;

            -- b2
            if out_load = '1' then
                m_valid_reg <= '0';
            end if;
            if out_load = '1' and flush_reg = '1' then
                m_valid_reg <= '1';
                m_data_reg <= hold_reg;
                m_keep_reg <= word_keep(to_integer(h_reg));
                m_last_reg <= hold_last_reg;
                m_user_reg <= hold_user_reg;
                m_crcw_reg <= hold_crcw_reg;
                h_reg <= (others => '0');
                hold_last_reg <= '0';
                flush_reg <= '0';
            elsif b2_take = '1' then
                m_valid_reg <= '1';
                m_data_reg <= comb(32 * WPB_c - 1 downto 0);
                m_user_reg <= b1_user_reg;
                m_crcw_reg <= comb_crcw(WPB_c - 1 downto 0);
                hold_reg <= comb(32 * 2 * WPB_c - 1 downto 32 * WPB_c);
                hold_crcw_reg <= comb_crcw(2 * WPB_c - 1 downto WPB_c);
                hold_user_reg <= b1_user_reg;
                if total <= WPB_c then
                    -- Only a frame's last beat can leave less than a full beat.
                    m_keep_reg <= word_keep(to_integer(total));
                    m_last_reg <= b1_last_reg;
                    h_reg <= (others => '0');
                    flush_reg <= '0';
                else
                    m_keep_reg <= (others => '1');
                    m_last_reg <= '0';
                    h_reg <= resize(total - WPB_c, N_W_c);
                    hold_last_reg <= b1_last_reg;
                    if resize(total - WPB_c, N_W_c) = WPB_c or b1_last_reg = '1' then
                        flush_reg <= '1';
                    else
                        flush_reg <= '0';
                    end if;
                end if;
            end if;

            if rst = '1' then
                b0_valid_reg <= '0';
                b1_valid_reg <= '0';
                have_last_reg <= '0';
                m_valid_reg <= '0';
                h_reg <= (others => '0');
                hold_last_reg <= '0';
                flush_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
