-- rnic_tx: the iWARP transmit datapath, RDMAP messages in, MPA FPDUs out,
-- DATA_W bits per clock: ddp_tx (DDP/RDMAP headers, MULPDU segmentation)
-- straight into mpa_tx (ULPDU_Length, pad, markers, CRC32c), octet for
-- octet what iwarp/rdmap's Message.AppendSegments and iwarp/mpa's Framer
-- send on each connection.
--
--   s_desc -> desc reg -+-> ddp_tx --> skid buffer --> mpa_tx -> m_axis
--            flag table +   DDP segments, tuser crc_en & mrk_en & conn & len
--   s_axis (payload) ------^   (ddp_tx's ctx = crc_en & mrk_en & conn)
--
-- VHDL-2008 twin of hw/rtl/rnic_tx.v: same generics, same ports, same
-- registers and clock counts, so tests/rnic_tx/test_rnic_tx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- Connections. A descriptor names its connection (s_desc_conn); everything
-- else MPA needs of the connection is configured once, through cfg_*, when
-- it enters Full Operation (RFC 5044 7.1.2 settles markers and CRC for each
-- half connection in the startup): cfg_pos, the marker position as
-- mpa_tx's (((sequence number of the next FPDU - marker base) mod 512) / 4,
-- 0 when Full Operation starts); cfg_mrk_en, markers on the connection's
-- transmit half; cfg_crc_en, CRC on (off: the CRC field is zero). A write
-- (cfg_valid and cfg_ready) sets all three. The two flags live in a
-- per-connection table (sdp_ram, 2 bits a connection) read when a
-- descriptor is taken, and travel with the message as the top two bits of
-- ddp_tx's ctx, so that ddp_tx's segment tuser (ctx & ulpdu_len) is
-- exactly mpa_tx's ULPDU tuser (crc_en & mrk_en & conn & len): between the
-- two blocks there is only a skid buffer. The marker position is in
-- mpa_tx's own table. Configure a connection while it has nothing in
-- flight, and before its first descriptor: a write in the clock a
-- descriptor of that connection is taken does not reach that descriptor.
-- cfg_ready is low only in a clock where mpa_tx updates its marker table
-- (an FPDU's end).
--
-- Descriptor, s_desc: ddp_tx's fields (opcode, stag, to, msn, inv_stag,
-- len, rr_*, mulpdu; see ddp_tx) and conn in place of ctx. mulpdu must be
-- at most 64768 (MPA's largest ULPDU, RFC 5044 3): a longer segment is
-- refused by mpa_tx (mpa_err code 1) and lost. The descriptor passes one
-- register (where the flag table is read) before ddp_tx; s_desc_ready
-- depends on registers only.
--
-- Payload, s_axis: as ddp_tx's (one lane-0 aligned frame per message with
-- a non-zero len, none for Read Requests; len decides, tkeep is ignored).
--
-- Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
-- octets, tkeep all ones but in the last beat; tuser = conn. Frames of one
-- connection come in message and segment order; connections interleave at
-- FPDU boundaries, in descriptor order (RFC 5044 8: a TCP transmitter cuts
-- its segments at these boundaries).
--
-- Errors: ddp_err_* are ddp_tx's err_* (codes 1..6 as in ddp_tx), with the
-- message's connection; mpa_err_* are mpa_tx's err_* (bit 0: a segment
-- longer than 64768 octets, dropped; bit 1 cannot happen behind ddp_tx).
--
-- Throughput: one output beat per clock with descriptors and payload back
-- to back and an always-ready sink. Latency: 25 clocks at every width from
-- the clock edge that accepts a descriptor to the edge where its first
-- FPDU beat can be taken, when the datapath is idle and the payload is
-- there: 1 (descriptor register) + 11 (ddp_tx) + 1 (skid buffer) + 12
-- (mpa_tx).
--
-- Verification: tests/rnic_tx/test_rnic_tx.py, every expected octet from
-- the Go stack through cmd/rnic-oracle (rdmap_segments for the message's
-- segments, then mpa_fpdus for each connection's FPDUs).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity rnic_tx is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk                 : in  std_logic := '0';
        rst                 : in  std_logic := '0';

        s_desc_valid        : in  std_logic := '0';
        s_desc_ready        : out std_logic;
        s_desc_opcode       : in  std_logic_vector(3 downto 0) := (others => '0');
        s_desc_stag         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_to           : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_msn          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_inv_stag     : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_len          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_stag : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_to   : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_rr_size      : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_stag  : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_to    : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_mulpdu       : in  std_logic_vector(15 downto 0) := (others => '0');
        s_desc_conn         : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        s_axis_tdata        : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep        : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid       : in  std_logic := '0';
        s_axis_tready       : out std_logic;
        s_axis_tlast        : in  std_logic := '0';

        cfg_valid           : in  std_logic := '0';
        cfg_ready           : out std_logic;
        cfg_conn            : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_pos             : in  std_logic_vector(6 downto 0) := (others => '0');
        cfg_mrk_en          : in  std_logic := '0';
        cfg_crc_en          : in  std_logic := '0';

        m_axis_tdata        : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep        : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid       : out std_logic;
        m_axis_tready       : in  std_logic := '0';
        m_axis_tlast        : out std_logic;
        m_axis_tuser        : out std_logic_vector(CONN_W - 1 downto 0);

        ddp_err_valid       : out std_logic;
        ddp_err_code        : out std_logic_vector(3 downto 0);
        ddp_err_conn        : out std_logic_vector(CONN_W - 1 downto 0);

        mpa_err_valid       : out std_logic;
        mpa_err_code        : out std_logic_vector(1 downto 0)
    );
end entity rnic_tx;

architecture rtl of rnic_tx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "rnic_tx: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        assert CONN_W >= 1
            report "rnic_tx: CONN_W must be at least 1, got " & integer'image(CONN_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c     : positive := DATA_W / 8;
    constant CTX_W_c : positive := CONN_W + 2;   -- crc_en & mrk_en & conn: mpa_tx's tuser above len

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype ctx_t is std_ulogic_vector(CTX_W_c - 1 downto 0);
    subtype w32_t is std_ulogic_vector(31 downto 0);
    subtype w64_t is std_ulogic_vector(63 downto 0);

    -- --- descriptor register, and the flag table read for it -----------------

    signal d_valid_reg : std_ulogic := '0';
    signal d_valid_next : std_ulogic := '0';
    signal d_opcode : std_ulogic_vector(3 downto 0) := (others => '0');
    signal d_stag : w32_t := (others => '0');
    signal d_to : w64_t := (others => '0');
    signal d_msn : w32_t := (others => '0');
    signal d_inv_stag : w32_t := (others => '0');
    signal d_len : w32_t := (others => '0');
    signal d_rr_sink_stag : w32_t := (others => '0');
    signal d_rr_sink_to : w64_t := (others => '0');
    signal d_rr_size : w32_t := (others => '0');
    signal d_rr_src_stag : w32_t := (others => '0');
    signal d_rr_src_to : w64_t := (others => '0');
    signal d_mulpdu : std_ulogic_vector(15 downto 0) := (others => '0');
    signal d_conn : conn_t := (others => '0');

    signal ddp_desc_ready : std_ulogic := '0';
    signal s_ready : std_ulogic := '0';
    signal d_load : std_ulogic := '0';

    signal mpa_cfg_ready : std_ulogic := '0';
    signal flag_we : std_ulogic := '0';
    signal flag_wdata : std_ulogic_vector(1 downto 0) := (others => '0');
    signal d_flags : std_ulogic_vector(1 downto 0) := (others => '0');
    signal d_ctx : ctx_t := (others => '0');

    -- --- DDP/RDMAP segments ------------------------------------------------------

    signal seg_data : data_t := (others => '0');
    signal seg_keep : keep_t := (others => '0');
    signal seg_valid, seg_ready, seg_last : std_ulogic := '0';
    -- crc_en & mrk_en & conn & ulpdu_len
    signal seg_user : std_ulogic_vector(CTX_W_c + 15 downto 0) := (others => '0');
    signal ddp_err_ctx : ctx_t := (others => '0');

    -- --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

    constant SK_W_c : natural := DATA_W + L_c + 1 + CTX_W_c + 16;

    subtype sk_t is std_ulogic_vector(SK_W_c - 1 downto 0);

    signal sk_s_ready_reg : std_ulogic := '0';
    signal sk_s_ready_next : std_ulogic := '0';
    signal sk_m_valid_reg : std_ulogic := '0';
    signal sk_m_valid_next : std_ulogic := '0';
    signal sk_t_valid_reg : std_ulogic := '0';
    signal sk_t_valid_next : std_ulogic := '0';
    signal sk_m_reg, sk_t_reg : sk_t := (others => '0');
    signal sk_in_to_out, sk_in_to_tmp, sk_tmp_to_out : std_ulogic := '0';
    signal mpa_s_ready : std_ulogic := '0';
    signal sk_in : sk_t := (others => '0');

begin

    -- --- descriptor register, and the flag table read for it -----------------

    s_ready <= (not d_valid_reg) or ddp_desc_ready;
    s_desc_ready <= s_ready;
    d_load <= s_desc_valid and s_ready;

    p_d : process (all) is
        variable v : std_ulogic;
    begin
        v := d_valid_reg;
        if ddp_desc_ready = '1' then
            v := '0';
        end if;
        if d_load = '1' then
            v := '1';
        end if;
        d_valid_next <= v;
    end process p_d;

    p_d_reg : process (clk) is
    begin
        if rising_edge(clk) then
            d_valid_reg <= d_valid_next;
            if d_load = '1' then
                d_opcode <= s_desc_opcode;
                d_stag <= s_desc_stag;
                d_to <= s_desc_to;
                d_msn <= s_desc_msn;
                d_inv_stag <= s_desc_inv_stag;
                d_len <= s_desc_len;
                d_rr_sink_stag <= s_desc_rr_sink_stag;
                d_rr_sink_to <= s_desc_rr_sink_to;
                d_rr_size <= s_desc_rr_size;
                d_rr_src_stag <= s_desc_rr_src_stag;
                d_rr_src_to <= s_desc_rr_src_to;
                d_mulpdu <= s_desc_mulpdu;
                d_conn <= s_desc_conn;
            end if;
            if rst = '1' then
                d_valid_reg <= '0';
            end if;
        end if;
    end process p_d_reg;

    -- crc_en & mrk_en per connection, read at the edge that loads the
    -- descriptor register, so the word sits next to the descriptor.
    cfg_ready <= mpa_cfg_ready;
    flag_we <= cfg_valid and mpa_cfg_ready;
    flag_wdata <= cfg_crc_en & cfg_mrk_en;

    flag_table : entity work.sdp_ram
        generic map (WIDTH => 2, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => flag_we,
            wr_addr => cfg_conn,
            wr_data => flag_wdata,
            rd_en => d_load,
            rd_addr => s_desc_conn,
            rd_data => d_flags
        );

    -- --- DDP/RDMAP segments ------------------------------------------------------

    d_ctx <= d_flags & d_conn;

    ddp : entity work.ddp_tx
        generic map (DATA_W => DATA_W, CTX_W => CTX_W_c)
        port map (
            clk => clk, rst => rst,
            s_desc_valid => d_valid_reg, s_desc_ready => ddp_desc_ready,
            s_desc_opcode => d_opcode, s_desc_stag => d_stag, s_desc_to => d_to,
            s_desc_msn => d_msn, s_desc_inv_stag => d_inv_stag, s_desc_len => d_len,
            s_desc_rr_sink_stag => d_rr_sink_stag, s_desc_rr_sink_to => d_rr_sink_to,
            s_desc_rr_size => d_rr_size, s_desc_rr_src_stag => d_rr_src_stag,
            s_desc_rr_src_to => d_rr_src_to, s_desc_mulpdu => d_mulpdu,
            s_desc_ctx => d_ctx,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep,
            s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
            s_axis_tlast => s_axis_tlast,
            m_axis_tdata => seg_data, m_axis_tkeep => seg_keep, m_axis_tvalid => seg_valid,
            m_axis_tready => seg_ready, m_axis_tlast => seg_last, m_axis_tuser => seg_user,
            err_valid => ddp_err_valid, err_code => ddp_err_code, err_ctx => ddp_err_ctx
        );

    -- (The flags in ddp_err_ctx's top two bits are not used.)
    ddp_err_conn <= ddp_err_ctx(CONN_W - 1 downto 0);

    -- --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

    -- mpa_tx's s_axis_tready comes through its stages' handshakes (frame,
    -- mark, the CRC FIFO), and ddp_tx's m_axis_tready fans out into the
    -- stall logic of its whole pipeline; joined, the two make a path longer
    -- than either block's own. Two registers of a segment beat each (output
    -- and skid), s_ready registered: one beat per clock, one clock of
    -- latency.
    seg_ready <= sk_s_ready_reg;
    sk_in <= seg_user & seg_last & seg_keep & seg_data;

    p_sk : process (all) is
        variable mv, tv : std_ulogic;
    begin
        mv := sk_m_valid_reg;
        tv := sk_t_valid_reg;
        sk_in_to_out <= '0';
        sk_in_to_tmp <= '0';
        sk_tmp_to_out <= '0';
        -- Ready next clock if the output moves on, or if the skid register
        -- stays empty (nothing comes in now, or the output is free).
        sk_s_ready_next <= mpa_s_ready
                           or ((not sk_t_valid_reg) and ((not sk_m_valid_reg) or (not seg_valid)));
        if sk_s_ready_reg = '1' then
            if mpa_s_ready = '1' or sk_m_valid_reg = '0' then
                mv := seg_valid;
                sk_in_to_out <= '1';
            else
                tv := seg_valid;
                sk_in_to_tmp <= '1';
            end if;
        elsif mpa_s_ready = '1' then
            mv := sk_t_valid_reg;
            tv := '0';
            sk_tmp_to_out <= '1';
        end if;
        sk_m_valid_next <= mv;
        sk_t_valid_next <= tv;
    end process p_sk;

    p_sk_reg : process (clk) is
    begin
        if rising_edge(clk) then
            sk_s_ready_reg <= sk_s_ready_next;
            sk_m_valid_reg <= sk_m_valid_next;
            sk_t_valid_reg <= sk_t_valid_next;
            if sk_in_to_out = '1' then
                sk_m_reg <= sk_in;
            elsif sk_tmp_to_out = '1' then
                sk_m_reg <= sk_t_reg;
            end if;
            if sk_in_to_tmp = '1' then
                sk_t_reg <= sk_in;
            end if;
            if rst = '1' then
                sk_s_ready_reg <= '0';
                sk_m_valid_reg <= '0';
                sk_t_valid_reg <= '0';
            end if;
        end if;
    end process p_sk_reg;

    -- --- MPA framing, markers, CRC ---------------------------------------------------

    mpa : entity work.mpa_tx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => sk_m_reg(DATA_W - 1 downto 0),
            s_axis_tkeep => sk_m_reg(DATA_W + L_c - 1 downto DATA_W),
            s_axis_tvalid => sk_m_valid_reg, s_axis_tready => mpa_s_ready,
            s_axis_tlast => sk_m_reg(DATA_W + L_c),
            s_axis_tuser => sk_m_reg(DATA_W + L_c + CTX_W_c + 16 downto DATA_W + L_c + 1),
            cfg_valid => cfg_valid, cfg_ready => mpa_cfg_ready, cfg_conn => cfg_conn,
            cfg_pos => cfg_pos,
            m_axis_tdata => m_axis_tdata, m_axis_tkeep => m_axis_tkeep,
            m_axis_tvalid => m_axis_tvalid, m_axis_tready => m_axis_tready,
            m_axis_tlast => m_axis_tlast, m_axis_tuser => m_axis_tuser,
            err_valid => mpa_err_valid, err_code => mpa_err_code
        );

end architecture rtl;
