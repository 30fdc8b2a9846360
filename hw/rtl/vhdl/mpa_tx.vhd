-- mpa_tx: the MPA transmitter. ULPDUs (DDP segments) in, FPDUs out, octet
-- for octet what iwarp/mpa's Framer sends (RFC 5044 4): ULPDU_Length, the
-- ULPDU, pad, markers every 512 octets of sequence space with their
-- FPDUPTRs, and the CRC32c over all of it.
--
--   s_axis -> mpa_tx_frame -> mpa_tx_mark -> +-> crc32c ------+-> merge -> m_axis
--             length, pad,    markers, per   |   (CRC of the   |   CRC into its
--             CRC place       connection     +-> FIFO ---------+   placeholder
--
-- VHDL-2008 twin of hw/rtl/mpa_tx.v: same generics, same ports, same
-- registers and clock counts, so tests/mpa_tx/test_mpa_tx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- Input, s_axis: one frame per ULPDU, lane-0 aligned; tuser, sampled on the
-- first beat: crc_en & mrk_en & conn(CONN_W-1 downto 0) & len(15 downto 0).
-- Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
-- octets; tuser = conn.
-- Connection table: cfg_* as in mpa_tx_mark (cfg_pos = ((sequence number
-- of the next FPDU - marker base) mod 512) / 4).
-- Errors: err_valid/err_code as in mpa_tx_frame.
-- Throughput: one output beat per clock with FPDUs back to back.
-- Latency: 12 clocks at W=64 from the first input beat to the first output
-- beat, for a frame that need not wait for its CRC.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity mpa_tx is
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
        s_axis_tuser  : in  std_logic_vector(CONN_W + 17 downto 0) := (others => '0');

        cfg_valid     : in  std_logic := '0';
        cfg_ready     : out std_logic;
        cfg_conn      : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_pos       : in  std_logic_vector(6 downto 0) := (others => '0');

        m_axis_tdata  : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep  : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid : out std_logic;
        m_axis_tready : in  std_logic := '0';
        m_axis_tlast  : out std_logic;
        m_axis_tuser  : out std_logic_vector(CONN_W - 1 downto 0);

        err_valid     : out std_logic;
        err_code      : out std_logic_vector(1 downto 0)
    );
end entity mpa_tx;

architecture rtl of mpa_tx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "mpa_tx: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c           : positive := DATA_W / 8;
    constant WPB_c         : positive := DATA_W / 32;
    constant USER_W_c      : positive := CONN_W + 2;
    constant FIFO_AW_c     : positive := 4;   -- must hold more beats than crc32c's latency
    constant CRC_LATENCY_c : positive := 7;   -- crc32c: clocks from a tlast beat to its result
    constant FIFO_W_c      : positive := DATA_W + L_c + WPB_c + 1 + USER_W_c;

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype crcw_t is std_ulogic_vector(WPB_c - 1 downto 0);
    subtype user_t is std_ulogic_vector(USER_W_c - 1 downto 0);
    subtype fifo_word_t is std_ulogic_vector(FIFO_W_c - 1 downto 0);
    type fifo_t is array (0 to 2 ** FIFO_AW_c - 1) of fifo_word_t;
    subtype ptr_t is unsigned(FIFO_AW_c downto 0);

    -- framing and markers
    signal f_data  : std_logic_vector(DATA_W - 1 downto 0);
    signal f_keep  : std_logic_vector(L_c - 1 downto 0);
    signal f_valid, f_ready, f_last, f_first : std_logic;
    signal f_user  : std_logic_vector(USER_W_c - 1 downto 0);
    signal f_crcw  : std_logic_vector(WPB_c - 1 downto 0);

    signal k_data  : std_logic_vector(DATA_W - 1 downto 0);
    signal k_keep  : std_logic_vector(L_c - 1 downto 0);
    signal k_valid, k_ready, k_last : std_logic;
    signal k_user  : std_logic_vector(USER_W_c - 1 downto 0);
    signal k_crcw  : std_logic_vector(WPB_c - 1 downto 0);

    -- CRC, with the FPDU waiting in a FIFO for it
    signal crc_keep : std_logic_vector(L_c - 1 downto 0);
    signal crc_in_valid, crc_in_ready : std_logic;
    signal crc_data : std_logic_vector(31 downto 0);
    signal crc_valid, crc_ready : std_logic;
    signal crc_tid_unused : std_logic_vector(0 downto 0);

    signal wr_ptr_reg, rd_ptr_reg : ptr_t := (others => '0');
    signal fill_reg : ptr_t := (others => '0');  -- wr_ptr - rd_ptr, registered (mpa_tx.v)
    signal fifo_full, fifo_empty, push : std_ulogic;
    signal fifo : fifo_t := (others => (others => '0'));

    signal head   : fifo_word_t;
    signal h_data : data_t;
    signal h_keep : keep_t;
    signal h_crcw : crcw_t;
    signal h_last : std_ulogic;
    signal h_user : user_t;
    signal h_crc_en : std_ulogic;

    signal out_load, primed, pop : std_ulogic;
    signal merged : data_t;

    signal m_data_reg  : data_t := (others => '0');
    signal m_keep_reg  : keep_t := (others => '0');
    signal m_valid_reg : std_ulogic := '0';
    signal m_last_reg  : std_ulogic := '0';
    signal m_user_reg  : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');

begin

    m_axis_tdata <= m_data_reg;
    m_axis_tkeep <= m_keep_reg;
    m_axis_tvalid <= m_valid_reg;
    m_axis_tlast <= m_last_reg;
    m_axis_tuser <= m_user_reg;

    -- --- framing and markers ----------------------------------------------------

    frame : entity work.mpa_tx_frame
        generic map (DATA_W => DATA_W, USER_W => USER_W_c)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep,
            s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
            s_axis_tlast => s_axis_tlast, s_axis_tuser => s_axis_tuser,
            m_axis_tdata => f_data, m_axis_tkeep => f_keep, m_axis_tvalid => f_valid,
            m_axis_tready => f_ready, m_axis_tlast => f_last, m_axis_tuser => f_user,
            m_axis_tfirst => f_first, m_axis_tcrcw => f_crcw,
            err_valid => err_valid, err_code => err_code
        );

    mark : entity work.mpa_tx_mark
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => f_data, s_axis_tkeep => f_keep, s_axis_tvalid => f_valid,
            s_axis_tready => f_ready, s_axis_tlast => f_last, s_axis_tuser => f_user,
            s_axis_tfirst => f_first, s_axis_tcrcw => f_crcw,
            cfg_valid => cfg_valid, cfg_ready => cfg_ready, cfg_conn => cfg_conn, cfg_pos => cfg_pos,
            m_axis_tdata => k_data, m_axis_tkeep => k_keep, m_axis_tvalid => k_valid,
            m_axis_tready => k_ready, m_axis_tlast => k_last, m_axis_tuser => k_user,
            m_axis_tcrcw => k_crcw
        );

    -- --- CRC, with the FPDU waiting in a FIFO for it -------------------------------

    -- The CRC covers every octet of the FPDU but its placeholder (RFC 5044 4.4).
    p_crc_keep : process (all) is
    begin
        for i in 0 to L_c - 1 loop
            crc_keep(i) <= k_keep(i) and not k_crcw(i / 4);
        end loop;
    end process p_crc_keep;

    fifo_full <= fill_reg(FIFO_AW_c);
    fifo_empty <= '1' when fill_reg = 0 else '0';
    k_ready <= crc_in_ready and not fifo_full;
    push <= k_valid and k_ready;
    crc_in_valid <= k_valid and not fifo_full;

    crc : entity work.crc32c
        generic map (DATA_W => DATA_W, ID_W => 1)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => k_data, s_axis_tkeep => crc_keep,
            s_axis_tvalid => crc_in_valid, s_axis_tready => crc_in_ready,
            s_axis_tlast => k_last, s_axis_tid => "0",
            s_axis_tuser => (32 downto 1 => '0', 0 => '1'),
            m_axis_crc_tdata => crc_data, m_axis_crc_tid => crc_tid_unused,
            m_axis_crc_tvalid => crc_valid, m_axis_crc_tready => crc_ready
        );

    head <= fifo(to_integer(rd_ptr_reg(FIFO_AW_c - 1 downto 0)));
    h_data <= head(DATA_W - 1 downto 0);
    h_keep <= head(DATA_W + L_c - 1 downto DATA_W);
    h_crcw <= head(DATA_W + L_c + WPB_c - 1 downto DATA_W + L_c);
    h_last <= head(DATA_W + L_c + WPB_c);
    h_user <= head(DATA_W + L_c + WPB_c + USER_W_c downto DATA_W + L_c + WPB_c + 1);
    h_crc_en <= h_user(CONN_W + 1);

    -- A frame's last beat leaves with its CRC. The others leave once the
    -- FIFO holds as many beats as the CRC takes clocks, or once the head
    -- frame's CRC is ready (see the Verilog for why).
    out_load <= (not m_valid_reg) or m_axis_tready;
    primed <= '1' when crc_valid = '1' or fill_reg >= CRC_LATENCY_c else '0';
    pop <= '1' when fifo_empty = '0' and out_load = '1'
                    and ((h_last = '1' and crc_valid = '1') or (h_last = '0' and primed = '1'))
           else '0';
    crc_ready <= pop and h_last;

    p_merged : process (all) is
    begin
        for w in 0 to WPB_c - 1 loop
            if h_crcw(w) = '1' and h_crc_en = '1' then
                merged(32 * w + 31 downto 32 * w) <= crc_data;
            else
                merged(32 * w + 31 downto 32 * w) <= h_data(32 * w + 31 downto 32 * w);
            end if;
        end loop;
    end process p_merged;

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if push = '1' then
                fifo(to_integer(wr_ptr_reg(FIFO_AW_c - 1 downto 0))) <=
                    k_user & k_last & k_crcw & k_keep & k_data;
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
                m_user_reg <= h_user(CONN_W - 1 downto 0);
            end if;
            if rst = '1' then
                wr_ptr_reg <= (others => '0');
                rd_ptr_reg <= (others => '0');
                fill_reg <= (others => '0');
                m_valid_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
