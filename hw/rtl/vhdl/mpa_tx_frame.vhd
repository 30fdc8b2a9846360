-- mpa_tx_frame: first stage of the MPA transmitter (mpa_tx). It turns each
-- ULPDU into the octets of its FPDU without markers: ULPDU_Length, the ULPDU,
-- pad to a multiple of four, and four zero octets that hold the CRC's place
-- (RFC 5044 4.1). mpa_tx_mark inserts the markers and mpa_tx fills the CRC.
--
-- VHDL-2008 twin of hw/rtl/mpa_tx_frame.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_tx/test_mpa_tx.py drives the
-- VHDL mpa_tx as it drives the Verilog one. The interface in brief (the
-- Verilog header has it in full):
--
-- Input, s_axis: one frame per ULPDU, lane-0 aligned (every beat full but
-- the last, whose tkeep is a run from lane 0). tuser = user & len(15:0),
-- sampled on the first beat; user is carried to the output unchanged.
--
-- Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
-- octets, the last four being the CRC placeholder (zero); tuser the frame's
-- user on every beat; tfirst high on its first beat; tcrcw one bit per
-- 32-bit word, set for the placeholder word on the last beat.
--
-- Errors: err_valid for one clock, err_code a bit per error: bit 0 len is 0
-- or over 64768 (frame dropped); bit 1 the frame's octet count differs from
-- len, found 3 clocks after its last beat.
--
-- Throughput: one beat per clock in and out, but a frame whose last input
-- beat cannot hold the shift, pad and placeholder takes one extra output
-- beat (s_axis_tready low for it). Latency: 1 clock.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity mpa_tx_frame is
    generic (
        DATA_W : natural := 64;
        USER_W : natural := 1
    );
    port (
        clk           : in  std_logic := '0';
        rst           : in  std_logic := '0';

        s_axis_tdata  : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep  : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid : in  std_logic := '0';
        s_axis_tready : out std_logic;
        s_axis_tlast  : in  std_logic := '0';
        s_axis_tuser  : in  std_logic_vector(USER_W + 15 downto 0) := (others => '0');

        m_axis_tdata  : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep  : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid : out std_logic;
        m_axis_tready : in  std_logic := '0';
        m_axis_tlast  : out std_logic;
        m_axis_tuser  : out std_logic_vector(USER_W - 1 downto 0);
        m_axis_tfirst : out std_logic;
        m_axis_tcrcw  : out std_logic_vector(DATA_W / 32 - 1 downto 0);

        err_valid     : out std_logic;
        err_code      : out std_logic_vector(1 downto 0)
    );
end entity mpa_tx_frame;

architecture rtl of mpa_tx_frame is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_tx_frame: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c        : positive := DATA_W / 8;      -- octets per beat
    constant WPB_c      : positive := DATA_W / 32;     -- 32-bit words per beat
    constant KEEP_LOG_c : positive := clog2(L_c);
    constant BEATS_W_c  : positive := 16 - KEEP_LOG_c;
    constant MAX_ULPDU_c : natural := 64768;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype crcw_t is std_ulogic_vector(WPB_c - 1 downto 0);
    subtype user_t is std_ulogic_vector(USER_W - 1 downto 0);
    subtype beats_t is unsigned(BEATS_W_c - 1 downto 0);
    subtype top_t is unsigned(KEEP_LOG_c - 1 downto 0);

    -- Output registers.
    signal m_data_reg  : data_t := (others => '0');
    signal m_keep_reg  : keep_t := (others => '0');
    signal m_valid_reg : std_ulogic := '0';
    signal m_last_reg  : std_ulogic := '0';
    signal m_user_reg  : user_t := (others => '0');
    signal m_first_reg : std_ulogic := '0';
    signal m_crcw_reg  : crcw_t := (others => '0');
    signal err_valid_reg : std_ulogic := '0';
    signal err_code_reg  : std_ulogic_vector(1 downto 0) := (others => '0');

    signal in_frame_reg : std_ulogic := '0';   -- a frame's first beat has been taken
    signal dropping_reg : std_ulogic := '0';   -- the frame being taken is refused
    signal carry_reg    : std_ulogic_vector(15 downto 0) := (others => '0');
    signal len_q_reg    : std_ulogic_vector(15 downto 0) := (others => '0');
    signal user_q_reg   : user_t := (others => '0');
    signal extra_reg    : std_ulogic := '0';   -- one more output beat is due
    signal extra_data_reg : data_t := (others => '0');
    signal extra_keep_reg : keep_t := (others => '0');
    signal extra_crcw_reg : crcw_t := (others => '0');

    signal beats_reg    : beats_t := (others => '0');
    signal c1_valid_reg : std_ulogic := '0';
    signal c2_valid_reg : std_ulogic := '0';
    signal c1_len_reg   : unsigned(15 downto 0) := (others => '0');
    signal c2_lenm1_reg : unsigned(15 downto 0) := (others => '0');
    signal c1_beats_reg : beats_t := (others => '0');
    signal c2_beats_reg : beats_t := (others => '0');
    signal c1_top_reg   : top_t := (others => '0');
    signal c2_top_reg   : top_t := (others => '0');

    signal load, ready, take, first, bad_len : std_ulogic;
    signal len_in  : std_ulogic_vector(15 downto 0);
    signal user_in : user_t;
    signal shifted : std_ulogic_vector(DATA_W + 15 downto 0);
    signal keep_ext : std_ulogic_vector(L_c + 1 downto 0);
    signal cw      : crcw_t;
    signal cw_ext  : std_ulogic_vector(WPB_c downto 0);
    signal last_data : data_t;
    signal last_keep : keep_t;
    signal last_crcw : crcw_t;
    signal spill_data : data_t;
    signal spill_keep : keep_t;
    signal spill_crcw : crcw_t;
    signal spill : std_ulogic;
    signal top : top_t;

begin

    m_axis_tdata <= m_data_reg;
    m_axis_tkeep <= m_keep_reg;
    m_axis_tvalid <= m_valid_reg;
    m_axis_tlast <= m_last_reg;
    m_axis_tuser <= m_user_reg;
    m_axis_tfirst <= m_first_reg;
    m_axis_tcrcw <= m_crcw_reg;
    err_valid <= err_valid_reg;
    err_code <= err_code_reg;

    load <= (not m_valid_reg) or m_axis_tready;
    ready <= load and not extra_reg;
    s_axis_tready <= ready;
    take <= s_axis_tvalid and ready;

    first <= not in_frame_reg;
    len_in <= s_axis_tuser(15 downto 0);
    user_in <= s_axis_tuser(USER_W + 15 downto 16) when first = '1' else user_q_reg;
    bad_len <= '1' when unsigned(len_in) = 0 or unsigned(len_in) > MAX_ULPDU_c else '0';

    -- The beat shifted up by the two octets of the length field (first
    -- beat) or of the carry (the others).
    shifted <= s_axis_tdata & (len_in(7 downto 0) & len_in(15 downto 8)) when first = '1'
               else s_axis_tdata & carry_reg;

    -- On a frame's last beat, everything follows from tkeep (see the
    -- Verilog): word j holds content when j = 0 or tkeep(4j - 2), the pad
    -- sharing the last such word; the placeholder is the word after it, or
    -- spills into an extra beat with the data octets past the beat.
    keep_ext <= s_axis_tkeep & "11";

    p_last : process (all) is
    begin
        for j in 0 to WPB_c - 1 loop
            cw(j) <= keep_ext(4 * j);
        end loop;
    end process p_last;

    cw_ext <= cw & '0';

    p_last_beat : process (all) is
    begin
        for k in 0 to L_c - 1 loop
            if keep_ext(k) = '1' then
                last_data(8 * k + 7 downto 8 * k) <= shifted(8 * k + 7 downto 8 * k);
            else
                last_data(8 * k + 7 downto 8 * k) <= (others => '0');
            end if;
            last_keep(k) <= cw(k / 4) or cw_ext(k / 4);
        end loop;
        for k in 0 to WPB_c - 1 loop
            last_crcw(k) <= cw_ext(k) and not cw(k);
        end loop;
    end process p_last_beat;

    p_spill : process (all) is
    begin
        spill_data <= (others => '0');
        if s_axis_tkeep(L_c - 1) = '1' then
            spill_data(15 downto 8) <= shifted(DATA_W + 15 downto DATA_W + 8);
        end if;
        if s_axis_tkeep(L_c - 2) = '1' then
            spill_data(7 downto 0) <= shifted(DATA_W + 7 downto DATA_W);
        end if;
        spill_keep <= (others => '0');
        spill_keep(3 downto 0) <= "1111";
        spill_keep(7 downto 4) <= (others => s_axis_tkeep(L_c - 2));
        spill_crcw <= (others => '0');
        spill_crcw(1) <= s_axis_tkeep(L_c - 2);
        spill_crcw(0) <= not s_axis_tkeep(L_c - 2);
    end process p_spill;

    spill <= cw(WPB_c - 1);

    -- The length check is off the datapath: a frame's last beat gives its
    -- beat count and m - 1 (the top lane of tkeep), compared two clocks
    -- later with len - 1.
    p_top : process (all) is
        variable t : top_t;
    begin
        t := (others => '0');
        for k in 0 to L_c - 1 loop
            if s_axis_tkeep(k) = '1' and (k = L_c - 1 or s_axis_tkeep((k + 1) mod L_c) = '0') then
                t := t or to_unsigned(k, KEEP_LOG_c);
            end if;
        end loop;
        top <= t;
    end process p_top;

    p_reg : process (clk) is
        variable refused : std_ulogic;
    begin
        if rising_edge(clk) then
            err_valid_reg <= '0';
            err_code_reg <= "00";
            if load = '1' then
                m_valid_reg <= '0';
            end if;
            if extra_reg = '1' and load = '1' then
                m_valid_reg <= '1';
                m_data_reg <= extra_data_reg;
                m_keep_reg <= extra_keep_reg;
                m_last_reg <= '1';
                m_first_reg <= '0';
                m_crcw_reg <= extra_crcw_reg;
                extra_reg <= '0';
            elsif take = '1' then
                carry_reg <= s_axis_tdata(DATA_W - 1 downto DATA_W - 16);
                if first = '1' then
                    len_q_reg <= len_in;
                    user_q_reg <= user_in;
                    dropping_reg <= bad_len;
                    beats_reg <= to_unsigned(1, BEATS_W_c);
                    refused := bad_len;
                else
                    beats_reg <= beats_reg + 1;
                    refused := dropping_reg;
                end if;
                in_frame_reg <= not s_axis_tlast;
                if first = '1' and bad_len = '1' then
                    err_valid_reg <= '1';
                    err_code_reg(0) <= '1';
                end if;
                c1_valid_reg <= s_axis_tlast and not refused;
                if first = '1' then
                    c1_len_reg <= unsigned(len_in);
                    c1_beats_reg <= (others => '0');
                else
                    c1_len_reg <= unsigned(len_q_reg);
                    c1_beats_reg <= beats_reg;
                end if;
                c1_top_reg <= top;
                if refused = '0' then
                    m_valid_reg <= '1';
                    m_user_reg <= user_in;
                    m_first_reg <= first;
                    if s_axis_tlast = '1' then
                        m_data_reg <= last_data;
                        if spill = '1' then
                            m_keep_reg <= (others => '1');
                            m_crcw_reg <= (others => '0');
                        else
                            m_keep_reg <= last_keep;
                            m_crcw_reg <= last_crcw;
                        end if;
                        m_last_reg <= not spill;
                        extra_reg <= spill;
                        extra_data_reg <= spill_data;
                        extra_keep_reg <= spill_keep;
                        extra_crcw_reg <= spill_crcw;
                    else
                        m_data_reg <= shifted(DATA_W - 1 downto 0);
                        m_keep_reg <= (others => '1');
                        m_last_reg <= '0';
                        m_crcw_reg <= (others => '0');
                    end if;
                end if;
            end if;
            if take = '0' then
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

            -- Synchronous reset of the control state, as an override after
            -- the normal update.
            if rst = '1' then
                c1_valid_reg <= '0';
                c2_valid_reg <= '0';
                in_frame_reg <= '0';
                dropping_reg <= '0';
                extra_reg <= '0';
                m_valid_reg <= '0';
                err_valid_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
