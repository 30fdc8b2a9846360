-- rnic_rx: the iWARP receive datapath, TCP segment payloads in, RDMAP
-- placement into host memory out, DATA_W bits per clock, for 2^CONN_W
-- connections, each framed by MPA or by TUF:
--
--   s_axis -> steer -> mpa_rx -+-> piece merge -> rx_join -> merge -> ddp_rx -> m_axi, m_cpl, m_err, status
--                   -> tuf_rx -+                              ^ (early ULPDUs: mpa_rx_ooo's, tuf_rx's)
--   exceptions: mpa_rx -> mpa_rx_ooo, and tuf_rx's -> m_exc; m_skip from both
--
-- VHDL-2008 twin of hw/rtl/rnic_rx.v: same generics, same ports, same
-- registers and clock counts, on the twins of its blocks; the Verilog
-- header has the interface, the TUF mode, the merges and the out-of-order
-- path in full. In brief: cfg_tuf and cfg_key put a connection in TUF mode
-- (enabled in tuf_rx, disabled in mpa_rx, and the other way round in MPA
-- mode); mode_mem steers each segment to the block of its connection's
-- mode. A cfg_* write is held in c_*_reg until mpa_rx, tuf_rx and
-- rx_join's clear have each taken it. mpa_rx finds the ULPDUs of each MPA connection's in-order stream
-- and cuts them into pieces at segment boundaries; tuf_rx takes a TUF
-- segment that is exactly one FPDU at rcv_nxt (draft 4.4) as one piece;
-- their pieces are merged whole into rx_join, and their verdicts in the
-- order of the last pieces (vq_*). rx_join joins a first piece until it
-- holds the DDP/RDMAP header, ddp_rx checks and places. A segment past a
-- hole goes on to the host (m_exc) through mpa_rx_ooo, which finds the
-- whole FPDUs in it through their markers, or from tuf_rx, which copies a
-- whole FPDU with the key and a good trailer; the merge hands their ULPDUs
-- to ddp_rx between pieces as early ULPDUs (checked against the
-- connection's state when they come, placed, never reported), frame by
-- frame, the two inputs in turn when both wait. cfg_* configures mpa_rx,
-- tuf_rx and mpa_rx_ooo and clears rx_join's held octets in one
-- handshake; fail_* marks a connection in error in both blocks (its
-- segments go to m_exc, reason 2); s_conn, s_stag and s_post go to ddp_rx.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity rnic_rx is
    generic (
        DATA_W     : natural := 64;
        CONN_W     : natural := 10;
        STAG_AW    : natural := 12;
        RQ_AW      : natural := 3;
        ADDR_W     : natural := 64;
        ID_W       : natural := 32;
        BURST      : natural := 8;
        REC_AW     : natural := 3;
        SEG_OCTETS : natural := 16384;
        AXI_W      : natural := DATA_W;   -- the host write port: DATA_W or 2 DATA_W (ddp_rx)
        WR_REQ     : natural := 0         -- 1: host writes on the request stream m_wr_* (ddp_rx)
    );
    port (
        clk                : in  std_logic := '0';
        rst                : in  std_logic := '0';
        cfg_valid          : in  std_logic := '0';
        cfg_ready          : out std_logic := '0';
        cfg_conn           : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_en             : in  std_logic := '0';
        cfg_mrk_en         : in  std_logic := '0';
        cfg_crc_en         : in  std_logic := '0';
        cfg_base           : in  std_logic_vector(31 downto 0) := (others => '0');
        cfg_tuf            : in  std_logic := '0';
        cfg_key            : in  std_logic_vector(47 downto 0) := (others => '0');
        fail_valid         : in  std_logic := '0';
        fail_ready         : out std_logic := '0';
        fail_conn          : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_axis_tdata       : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep       : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid      : in  std_logic := '0';
        s_axis_tready      : out std_logic := '0';
        s_axis_tlast       : in  std_logic := '0';
        s_axis_tuser       : in  std_logic_vector(CONN_W + 47 downto 0) := (others => '0');
        m_exc_tdata        : out std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        m_exc_tkeep        : out std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        m_exc_tvalid       : out std_logic := '0';
        m_exc_tready       : in  std_logic := '0';
        m_exc_tlast        : out std_logic := '0';
        m_exc_tuser        : out std_logic_vector(CONN_W + 50 downto 0) := (others => '0');
        m_skip_valid       : out std_logic := '0';
        m_skip_conn        : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_skip_seq         : out std_logic_vector(31 downto 0) := (others => '0');
        m_skip_reason      : out std_logic_vector(1 downto 0) := (others => '0');
        m_early_valid      : out std_logic := '0';
        m_early_conn       : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        ooo_busy           : out std_logic := '0';
        s_conn_valid       : in  std_logic := '0';
        s_conn_ready       : out std_logic := '0';
        s_conn_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_conn_enable      : in  std_logic := '0';
        s_conn_pd          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_stag_valid       : in  std_logic := '0';
        s_stag_ready       : out std_logic := '0';
        s_stag_index       : in  std_logic_vector(STAG_AW - 1 downto 0) := (others => '0');
        s_stag_entry_valid : in  std_logic := '0';
        s_stag_key         : in  std_logic_vector(7 downto 0) := (others => '0');
        s_stag_pd          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_stag_bound       : in  std_logic := '0';
        s_stag_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_stag_access      : in  std_logic_vector(1 downto 0) := (others => '0');
        s_stag_base        : in  std_logic_vector(63 downto 0) := (others => '0');
        s_stag_len         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_stag_addr        : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        s_post_valid       : in  std_logic := '0';
        s_post_ready       : out std_logic := '0';
        s_post_conn        : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        s_post_qn          : in  std_logic_vector(1 downto 0) := (others => '0');
        s_post_addr        : in  std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        s_post_len         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_post_id          : in  std_logic_vector(ID_W - 1 downto 0) := (others => '0');
        m_axi_awid         : out std_logic_vector(0 downto 0) := (others => '0');
        m_axi_awaddr       : out std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        m_axi_awlen        : out std_logic_vector(7 downto 0) := (others => '0');
        m_axi_awsize       : out std_logic_vector(2 downto 0) := (others => '0');
        m_axi_awburst      : out std_logic_vector(1 downto 0) := (others => '0');
        m_axi_awcache      : out std_logic_vector(3 downto 0) := (others => '0');
        m_axi_awprot       : out std_logic_vector(2 downto 0) := (others => '0');
        m_axi_awvalid      : out std_logic := '0';
        m_axi_awready      : in  std_logic := '0';
        m_axi_wdata        : out std_logic_vector(AXI_W - 1 downto 0) := (others => '0');
        m_axi_wstrb        : out std_logic_vector(AXI_W / 8 - 1 downto 0) := (others => '0');
        m_axi_wlast        : out std_logic := '0';
        m_axi_wvalid       : out std_logic := '0';
        m_axi_wready       : in  std_logic := '0';
        m_axi_bid          : in  std_logic_vector(0 downto 0) := (others => '0');
        m_axi_bresp        : in  std_logic_vector(1 downto 0) := (others => '0');
        m_axi_bvalid       : in  std_logic := '0';
        m_axi_bready       : out std_logic := '0';
        m_wr_addr          : out std_logic_vector(ADDR_W - 1 downto 0) := (others => '0');
        m_wr_data          : out std_logic_vector(AXI_W - 1 downto 0) := (others => '0');
        m_wr_strb          : out std_logic_vector(AXI_W / 8 - 1 downto 0) := (others => '0');
        m_wr_last          : out std_logic := '0';
        m_wr_valid         : out std_logic := '0';
        m_wr_ready         : in  std_logic := '0';
        m_cpl_valid        : out std_logic := '0';
        m_cpl_ready        : in  std_logic := '0';
        m_cpl_conn         : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_cpl_opcode       : out std_logic_vector(3 downto 0) := (others => '0');
        m_cpl_tagged       : out std_logic := '0';
        m_cpl_qn           : out std_logic_vector(1 downto 0) := (others => '0');
        m_cpl_msn          : out std_logic_vector(31 downto 0) := (others => '0');
        m_cpl_len          : out std_logic_vector(31 downto 0) := (others => '0');
        m_cpl_id           : out std_logic_vector(ID_W - 1 downto 0) := (others => '0');
        m_cpl_stag         : out std_logic_vector(31 downto 0) := (others => '0');
        m_cpl_inv_stag     : out std_logic_vector(31 downto 0) := (others => '0');
        m_cpl_rr           : out std_logic_vector(223 downto 0) := (others => '0');
        m_err_valid        : out std_logic := '0';
        m_err_ready        : in  std_logic := '0';
        m_err_conn         : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_err_layer        : out std_logic_vector(3 downto 0) := (others => '0');
        m_err_etype        : out std_logic_vector(3 downto 0) := (others => '0');
        m_err_code         : out std_logic_vector(7 downto 0) := (others => '0');
        m_err_hdrct        : out std_logic_vector(1 downto 0) := (others => '0');
        m_err_seglen       : out std_logic_vector(15 downto 0) := (others => '0');
        m_err_hdr          : out std_logic_vector(143 downto 0) := (others => '0');
        m_drop_valid       : out std_logic := '0';
        m_drop_conn        : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_drop_reason      : out std_logic_vector(1 downto 0) := (others => '0');
        m_drop_first       : out std_logic := '0';
        m_drop_count       : out std_logic_vector(31 downto 0) := (others => '0');
        m_post_err_valid   : out std_logic := '0';
        m_post_err_conn    : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_post_err_qn      : out std_logic_vector(1 downto 0) := (others => '0');
        m_post_err_id      : out std_logic_vector(ID_W - 1 downto 0) := (others => '0');
        m_post_err_reason  : out std_logic_vector(1 downto 0) := (others => '0');
        m_berr_valid       : out std_logic := '0';
        m_berr_conn        : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_berr_resp        : out std_logic_vector(1 downto 0) := (others => '0');
        m_done_valid       : out std_logic := '0';
        m_done_conn        : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        -- The counters' pulses (rnic_rx.v's m_stat_*).
        m_stat_verdict_valid : out std_logic := '0';
        m_stat_verdict_code  : out std_logic_vector(2 downto 0) := (others => '0');
        m_stat_verdict_conn  : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        m_stat_place         : out std_logic := '0'
    );
end entity rnic_rx;

architecture rtl of rnic_rx is
    constant N : natural := DATA_W / 8;
    constant VQ_AW : natural := 5;

    signal mpa_cfg_ready, tuf_cfg_ready, clr_ready, ooo_cfg_ready : std_logic;
    signal cfg_go : std_logic;
    signal mpa_cfg_en, tuf_cfg_en : std_logic;
    -- The pending write (rnic_rx.v's c_*).
    signal c_pend_reg : std_logic := '0';
    signal c_mpa_done_reg, c_tuf_done_reg, c_clr_done_reg : std_logic := '0';
    signal c_conn_reg : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal c_en_reg, c_mrk_en_reg, c_crc_en_reg, c_tuf_reg : std_logic := '0';
    signal c_base_reg : std_logic_vector(31 downto 0) := (others => '0');
    signal c_key_reg : std_logic_vector(47 downto 0) := (others => '0');
    signal c_mpa_valid, c_tuf_valid, c_clr_valid, c_mpa_now, c_tuf_now, c_clr_now : std_logic;
    signal mpa_fail_ready, tuf_fail_ready, mpa_fail_valid, tuf_fail_valid : std_logic;

    -- The connections' modes (rnic_rx.v's mode_mem): '1' TUF, '0' MPA.
    type mode_t is array (0 to 2 ** CONN_W - 1) of std_logic;
    signal mode_mem : mode_t := (others => '0');

    -- Steering (see rnic_rx.v).
    signal s_inf_reg : std_logic := '0';
    signal s_sel_reg : std_logic := '0';
    signal s_sel : std_logic;
    signal s_ready_i, mpa_s_tready, tuf_s_tready, mpa_s_tvalid, tuf_s_tvalid : std_logic;

    signal p_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal p_tkeep : std_logic_vector(N - 1 downto 0);
    signal p_tvalid, p_tready, p_tlast : std_logic;
    signal p_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal pv_tdata : std_logic_vector(2 downto 0);
    signal pv_tvalid, pv_tready : std_logic;
    signal pv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal t_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal t_tkeep : std_logic_vector(N - 1 downto 0);
    signal t_tvalid, t_tready, t_tlast : std_logic;
    signal t_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal tv_tdata : std_logic_vector(2 downto 0);
    signal tv_tvalid, tv_tready : std_logic;
    signal tv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal q_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal q_tkeep : std_logic_vector(N - 1 downto 0);
    signal q_tvalid, q_tready, q_tlast, q_join_ready, q_ends : std_logic;
    signal q_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal qv_tdata : std_logic_vector(2 downto 0);
    signal qv_tvalid, qv_tready : std_logic;
    signal qv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal j_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal j_tkeep : std_logic_vector(N - 1 downto 0);
    signal j_tvalid, j_tready, j_tlast : std_logic;
    signal j_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal j_tuser_x : std_logic_vector(CONN_W + 18 downto 0);
    signal jv_tdata : std_logic_vector(2 downto 0);
    signal jv_tvalid, jv_tready : std_logic;
    signal jv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal x_tdata, ox_tdata, tx_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal x_tkeep, ox_tkeep, tx_tkeep : std_logic_vector(N - 1 downto 0);
    signal x_tvalid, x_tready, x_tlast : std_logic;
    signal ox_tvalid, ox_tready, ox_tlast : std_logic;
    signal tx_tvalid, tx_tready, tx_tlast : std_logic;
    signal x_tuser, ox_tuser, tx_tuser : std_logic_vector(CONN_W + 50 downto 0);

    signal oe_tdata, te_tdata, e_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal oe_tkeep, te_tkeep, e_tkeep : std_logic_vector(N - 1 downto 0);
    signal oe_tvalid, oe_tready, oe_tlast : std_logic;
    signal te_tvalid, te_tready, te_tlast : std_logic;
    signal e_tvalid, e_tready, e_tlast : std_logic;
    signal oe_tuser, te_tuser, e_tuser : std_logic_vector(CONN_W + 47 downto 0);
    signal e_tuser_x : std_logic_vector(CONN_W + 18 downto 0);

    signal k_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal k_tkeep : std_logic_vector(N - 1 downto 0);
    signal k_tvalid, k_tready, k_tlast : std_logic;
    signal k_tuser : std_logic_vector(CONN_W + 18 downto 0);

    signal tuf_busy, ooo_search_busy : std_logic;

    -- The verdicts' order (rnic_rx.v's vq_*).
    type vq_t is array (0 to 2 ** VQ_AW - 1) of std_logic;
    signal vq_mem : vq_t := (others => '0');
    signal vq_wp_reg : unsigned(VQ_AW downto 0) := (others => '0');
    signal vq_rp_reg : unsigned(VQ_AW downto 0) := (others => '0');
    signal vq_empty, vq_full, vq_head, qv_head_valid : std_logic;

    -- m_skip's holds (rnic_rx.v's o_sk_*, t_sk_*).
    signal o_skip_valid, t_skip_valid : std_logic;
    signal o_skip_conn, t_skip_conn : std_logic_vector(CONN_W - 1 downto 0);
    signal o_skip_seq, t_skip_seq : std_logic_vector(31 downto 0);
    signal o_skip_reason, t_skip_reason : std_logic_vector(1 downto 0);
    signal o_sk_reg, t_sk_reg, sk_turn_reg : std_logic := '0';
    signal o_sk_data_reg, t_sk_data_reg : std_logic_vector(CONN_W + 33 downto 0) := (others => '0');
    signal sk_pick, sk_valid : std_logic;
    signal sk_data : std_logic_vector(CONN_W + 33 downto 0);

    -- Into ddp_rx (see rnic_rx.v).
    signal m_inf_reg : std_logic := '0';        -- inside a frame
    signal early_valid_reg : std_logic := '0';
    signal early_conn_reg : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
begin
    assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
        report "rnic_rx: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
        severity failure;

    -- --- configuration: one write, held until mpa_rx, tuf_rx and rx_join's clear --------
    -- have each taken it (rnic_rx.v); mpa_rx_ooo and the mode in the handshake's clock.

    cfg_ready <= not c_pend_reg;
    cfg_go <= cfg_valid and not c_pend_reg;
    c_clr_valid <= c_pend_reg and not c_clr_done_reg;
    c_clr_now <= c_clr_done_reg or clr_ready;
    c_mpa_valid <= c_pend_reg and not c_mpa_done_reg and c_clr_now;
    c_tuf_valid <= c_pend_reg and not c_tuf_done_reg and c_clr_now;
    c_mpa_now <= c_mpa_done_reg or (c_clr_now and mpa_cfg_ready);
    c_tuf_now <= c_tuf_done_reg or (c_clr_now and tuf_cfg_ready);
    mpa_cfg_en <= c_en_reg and not c_tuf_reg;
    tuf_cfg_en <= c_en_reg and c_tuf_reg;

    p_cfg : process (clk)
    begin
        if rising_edge(clk) then
            if cfg_go = '1' then
                c_pend_reg <= '1';
                c_mpa_done_reg <= '0';
                c_tuf_done_reg <= '0';
                c_clr_done_reg <= '0';
                c_conn_reg <= cfg_conn;
                c_en_reg <= cfg_en;
                c_mrk_en_reg <= cfg_mrk_en;
                c_crc_en_reg <= cfg_crc_en;
                c_tuf_reg <= cfg_tuf;
                c_base_reg <= cfg_base;
                c_key_reg <= cfg_key;
            elsif c_pend_reg = '1' then
                c_mpa_done_reg <= c_mpa_now;
                c_tuf_done_reg <= c_tuf_now;
                c_clr_done_reg <= c_clr_now;
                if c_mpa_now = '1' and c_tuf_now = '1' and c_clr_now = '1' then
                    c_pend_reg <= '0';
                end if;
            end if;
            if rst = '1' then
                c_pend_reg <= '0';
            end if;
        end if;
    end process p_cfg;

    p_mode : process (clk)
    begin
        if rising_edge(clk) then
            if cfg_go = '1' then
                mode_mem(to_integer(unsigned(cfg_conn))) <= cfg_tuf;
            end if;
        end if;
    end process p_mode;

    -- (Never while a cfg_* write is pending: see rnic_rx.v.)
    fail_ready <= mpa_fail_ready and tuf_fail_ready and not c_pend_reg;
    mpa_fail_valid <= fail_valid and tuf_fail_ready and not c_pend_reg;
    tuf_fail_valid <= fail_valid and mpa_fail_ready and not c_pend_reg;

    -- --- steering -------------------------------------------------------------------

    s_sel <= s_sel_reg when s_inf_reg = '1' else
             mode_mem(to_integer(unsigned(s_axis_tuser(CONN_W + 47 downto 48))));
    s_ready_i <= tuf_s_tready when s_sel = '1' else mpa_s_tready;
    s_axis_tready <= s_ready_i;
    mpa_s_tvalid <= s_axis_tvalid and not s_sel;
    tuf_s_tvalid <= s_axis_tvalid and s_sel;

    p_steer : process (clk)
    begin
        if rising_edge(clk) then
            if s_axis_tvalid = '1' and s_ready_i = '1' then
                s_inf_reg <= not s_axis_tlast;
                s_sel_reg <= s_sel;
            end if;
            if rst = '1' then
                s_inf_reg <= '0';
                s_sel_reg <= '0';
            end if;
        end if;
    end process p_steer;

    -- --- mpa_rx, tuf_rx -> merge -> rx_join -> merge -> ddp_rx; mpa_rx_ooo ------------

    mpa : entity work.mpa_rx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            cfg_valid => c_mpa_valid, cfg_ready => mpa_cfg_ready, cfg_conn => c_conn_reg,
            cfg_en => mpa_cfg_en, cfg_mrk_en => c_mrk_en_reg, cfg_crc_en => c_crc_en_reg, cfg_base => c_base_reg,
            fail_valid => mpa_fail_valid, fail_ready => mpa_fail_ready, fail_conn => fail_conn,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep, s_axis_tvalid => mpa_s_tvalid,
            s_axis_tready => mpa_s_tready, s_axis_tlast => s_axis_tlast, s_axis_tuser => s_axis_tuser,
            m_axis_tdata => p_tdata, m_axis_tkeep => p_tkeep, m_axis_tvalid => p_tvalid,
            m_axis_tready => p_tready, m_axis_tlast => p_tlast, m_axis_tuser => p_tuser,
            m_verdict_tdata => pv_tdata, m_verdict_tvalid => pv_tvalid, m_verdict_tready => pv_tready,
            m_verdict_tuser => pv_tuser,
            m_exc_tdata => x_tdata, m_exc_tkeep => x_tkeep, m_exc_tvalid => x_tvalid,
            m_exc_tready => x_tready, m_exc_tlast => x_tlast, m_exc_tuser => x_tuser
        );

    tuf : entity work.tuf_rx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, SEG_OCTETS => SEG_OCTETS)
        port map (
            clk => clk, rst => rst,
            cfg_valid => c_tuf_valid, cfg_ready => tuf_cfg_ready, cfg_conn => c_conn_reg,
            cfg_en => tuf_cfg_en, cfg_key => c_key_reg, cfg_base => c_base_reg,
            fail_valid => tuf_fail_valid, fail_ready => tuf_fail_ready, fail_conn => fail_conn,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep, s_axis_tvalid => tuf_s_tvalid,
            s_axis_tready => tuf_s_tready, s_axis_tlast => s_axis_tlast, s_axis_tuser => s_axis_tuser,
            m_axis_tdata => t_tdata, m_axis_tkeep => t_tkeep, m_axis_tvalid => t_tvalid,
            m_axis_tready => t_tready, m_axis_tlast => t_tlast, m_axis_tuser => t_tuser,
            m_verdict_tdata => tv_tdata, m_verdict_tvalid => tv_tvalid, m_verdict_tready => tv_tready,
            m_verdict_tuser => tv_tuser,
            m_exc_tdata => tx_tdata, m_exc_tkeep => tx_tkeep, m_exc_tvalid => tx_tvalid,
            m_exc_tready => tx_tready, m_exc_tlast => tx_tlast, m_exc_tuser => tx_tuser,
            m_early_tdata => te_tdata, m_early_tkeep => te_tkeep, m_early_tvalid => te_tvalid,
            m_early_tready => te_tready, m_early_tlast => te_tlast, m_early_tuser => te_tuser,
            m_skip_valid => t_skip_valid, m_skip_conn => t_skip_conn, m_skip_seq => t_skip_seq,
            m_skip_reason => t_skip_reason,
            early_busy => tuf_busy
        );

    ooo : entity work.mpa_rx_ooo
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, SEG_OCTETS => SEG_OCTETS)
        port map (
            clk => clk, rst => rst,
            cfg_valid => cfg_go, cfg_ready => ooo_cfg_ready, cfg_conn => cfg_conn,
            cfg_mrk_en => cfg_mrk_en, cfg_crc_en => cfg_crc_en, cfg_base => cfg_base,
            s_exc_tdata => x_tdata, s_exc_tkeep => x_tkeep, s_exc_tvalid => x_tvalid,
            s_exc_tready => x_tready, s_exc_tlast => x_tlast, s_exc_tuser => x_tuser,
            m_exc_tdata => ox_tdata, m_exc_tkeep => ox_tkeep, m_exc_tvalid => ox_tvalid,
            m_exc_tready => ox_tready, m_exc_tlast => ox_tlast, m_exc_tuser => ox_tuser,
            m_early_tdata => oe_tdata, m_early_tkeep => oe_tkeep, m_early_tvalid => oe_tvalid,
            m_early_tready => oe_tready, m_early_tlast => oe_tlast, m_early_tuser => oe_tuser,
            m_skip_valid => o_skip_valid, m_skip_conn => o_skip_conn, m_skip_seq => o_skip_seq,
            m_skip_reason => o_skip_reason,
            busy => ooo_search_busy
        );

    ooo_busy <= ooo_search_busy or tuf_busy;

    exc_merge : entity work.rx_merge
        generic map (DATA_W => DATA_W, USER_W => CONN_W + 51)
        port map (
            clk => clk, rst => rst,
            s0_tdata => ox_tdata, s0_tkeep => ox_tkeep, s0_tvalid => ox_tvalid, s0_tready => ox_tready,
            s0_tlast => ox_tlast, s0_tuser => ox_tuser,
            s1_tdata => tx_tdata, s1_tkeep => tx_tkeep, s1_tvalid => tx_tvalid, s1_tready => tx_tready,
            s1_tlast => tx_tlast, s1_tuser => tx_tuser,
            m_tdata => m_exc_tdata, m_tkeep => m_exc_tkeep, m_tvalid => m_exc_tvalid, m_tready => m_exc_tready,
            m_tlast => m_exc_tlast, m_tuser => m_exc_tuser
        );

    early_merge : entity work.rx_merge
        generic map (DATA_W => DATA_W, USER_W => CONN_W + 48)
        port map (
            clk => clk, rst => rst,
            s0_tdata => oe_tdata, s0_tkeep => oe_tkeep, s0_tvalid => oe_tvalid, s0_tready => oe_tready,
            s0_tlast => oe_tlast, s0_tuser => oe_tuser,
            s1_tdata => te_tdata, s1_tkeep => te_tkeep, s1_tvalid => te_tvalid, s1_tready => te_tready,
            s1_tlast => te_tlast, s1_tuser => te_tuser,
            m_tdata => e_tdata, m_tkeep => e_tkeep, m_tvalid => e_tvalid, m_tready => e_tready,
            m_tlast => e_tlast, m_tuser => e_tuser
        );

    -- The pieces into rx_join; the verdicts in the order of their last
    -- pieces there (rnic_rx.v).
    vq_empty <= to_sl(vq_wp_reg = vq_rp_reg);
    vq_full <= to_sl(vq_wp_reg = ((not vq_rp_reg(VQ_AW)) & vq_rp_reg(VQ_AW - 1 downto 0)));
    vq_head <= vq_mem(to_integer(vq_rp_reg(VQ_AW - 1 downto 0)));
    q_ends <= q_tlast and q_tuser(0);
    q_tready <= q_join_ready and not (q_ends and vq_full);

    piece_merge : entity work.rx_merge
        generic map (DATA_W => DATA_W, USER_W => CONN_W + 18)
        port map (
            clk => clk, rst => rst,
            s0_tdata => p_tdata, s0_tkeep => p_tkeep, s0_tvalid => p_tvalid, s0_tready => p_tready,
            s0_tlast => p_tlast, s0_tuser => p_tuser,
            s1_tdata => t_tdata, s1_tkeep => t_tkeep, s1_tvalid => t_tvalid, s1_tready => t_tready,
            s1_tlast => t_tlast, s1_tuser => t_tuser,
            m_tdata => q_tdata, m_tkeep => q_tkeep, m_tvalid => q_tvalid, m_tready => q_tready,
            m_tlast => q_tlast, m_tuser => q_tuser
        );

    p_vq : process (clk)
    begin
        if rising_edge(clk) then
            if q_tvalid = '1' and q_tready = '1' and q_ends = '1' then
                vq_mem(to_integer(vq_wp_reg(VQ_AW - 1 downto 0))) <= t_tready;
                vq_wp_reg <= vq_wp_reg + 1;
            end if;
            if qv_tvalid = '1' and qv_tready = '1' then
                vq_rp_reg <= vq_rp_reg + 1;
            end if;
            if rst = '1' then
                vq_wp_reg <= (others => '0');
                vq_rp_reg <= (others => '0');
            end if;
        end if;
    end process p_vq;

    qv_head_valid <= tv_tvalid when vq_head = '1' else pv_tvalid;
    qv_tvalid <= not vq_empty and qv_head_valid;
    qv_tdata <= tv_tdata when vq_head = '1' else pv_tdata;
    qv_tuser <= tv_tuser when vq_head = '1' else pv_tuser;
    pv_tready <= not vq_empty and not vq_head and qv_tready;
    tv_tready <= not vq_empty and vq_head and qv_tready;

    -- m_skip: both blocks' pulses through a one-entry hold each (rnic_rx.v).
    sk_pick <= t_sk_reg and (not o_sk_reg or sk_turn_reg);
    sk_valid <= o_sk_reg or t_sk_reg;
    sk_data <= t_sk_data_reg when sk_pick = '1' else o_sk_data_reg;
    m_skip_valid <= sk_valid;
    m_skip_conn <= sk_data(CONN_W + 33 downto 34);
    m_skip_seq <= sk_data(33 downto 2);
    m_skip_reason <= sk_data(1 downto 0);

    p_skip : process (clk)
    begin
        if rising_edge(clk) then
            if sk_valid = '1' then
                sk_turn_reg <= not sk_pick;
                if sk_pick = '1' then
                    t_sk_reg <= '0';
                else
                    o_sk_reg <= '0';
                end if;
            end if;
            if o_skip_valid = '1' then
                o_sk_reg <= '1';
                o_sk_data_reg <= o_skip_conn & o_skip_seq & o_skip_reason;
            end if;
            if t_skip_valid = '1' then
                t_sk_reg <= '1';
                t_sk_data_reg <= t_skip_conn & t_skip_seq & t_skip_reason;
            end if;
            if rst = '1' then
                o_sk_reg <= '0';
                t_sk_reg <= '0';
                sk_turn_reg <= '0';
            end if;
        end if;
    end process p_skip;

    joiner : entity work.rx_join
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => q_tdata, s_axis_tkeep => q_tkeep, s_axis_tvalid => q_tvalid,
            s_axis_tready => q_join_ready, s_axis_tlast => q_tlast, s_axis_tuser => q_tuser,
            m_axis_tdata => j_tdata, m_axis_tkeep => j_tkeep, m_axis_tvalid => j_tvalid,
            m_axis_tready => j_tready, m_axis_tlast => j_tlast, m_axis_tuser => j_tuser,
            s_verdict_tdata => qv_tdata, s_verdict_tvalid => qv_tvalid, s_verdict_tready => qv_tready,
            s_verdict_tuser => qv_tuser,
            m_verdict_tdata => jv_tdata, m_verdict_tvalid => jv_tvalid, m_verdict_tready => jv_tready,
            m_verdict_tuser => jv_tuser,
            clr_valid => c_clr_valid, clr_ready => clr_ready, clr_conn => c_conn_reg
        );

    -- --- merge: rx_join's pieces and the early ULPDUs, frame by frame ----------------

    j_tuser_x <= '0' & j_tuser;
    e_tuser_x <= '1' & e_tuser(CONN_W + 15 downto CONN_W) & e_tuser(CONN_W - 1 downto 0) & "11";

    ddp_merge : entity work.rx_merge
        generic map (DATA_W => DATA_W, USER_W => CONN_W + 19)
        port map (
            clk => clk, rst => rst,
            s0_tdata => j_tdata, s0_tkeep => j_tkeep, s0_tvalid => j_tvalid, s0_tready => j_tready,
            s0_tlast => j_tlast, s0_tuser => j_tuser_x,
            s1_tdata => e_tdata, s1_tkeep => e_tkeep, s1_tvalid => e_tvalid, s1_tready => e_tready,
            s1_tlast => e_tlast, s1_tuser => e_tuser_x,
            m_tdata => k_tdata, m_tkeep => k_tkeep, m_tvalid => k_tvalid, m_tready => k_tready,
            m_tlast => k_tlast, m_tuser => k_tuser
        );

    p_ddp_in : process (clk)
    begin
        if rising_edge(clk) then
            early_valid_reg <= '0';
            if k_tvalid = '1' and k_tready = '1' then
                m_inf_reg <= not k_tlast;
                if m_inf_reg = '0' then
                    early_valid_reg <= k_tuser(CONN_W + 18);
                    early_conn_reg <= k_tuser(CONN_W + 1 downto 2);
                end if;
            end if;
            if rst = '1' then
                m_inf_reg <= '0';
                early_valid_reg <= '0';
            end if;
        end if;
    end process p_ddp_in;

    m_early_valid <= early_valid_reg;

    -- The counters' pulses: a verdict as ddp_rx takes it; a ULPDU's first
    -- piece (not early) with a payload (T bit: octet 0 bit 7).
    m_stat_verdict_valid <= jv_tvalid and jv_tready;
    m_stat_verdict_code <= jv_tdata;
    m_stat_verdict_conn <= jv_tuser;
    m_stat_place <= '1' when k_tvalid = '1' and k_tready = '1' and m_inf_reg = '0' and k_tuser(CONN_W + 18) = '0'
                             and k_tuser(1) = '1'
                             and ((k_tdata(7) = '1' and unsigned(k_tuser(CONN_W + 17 downto CONN_W + 2)) > 14)
                                  or (k_tdata(7) = '0' and unsigned(k_tuser(CONN_W + 17 downto CONN_W + 2)) > 18))
                    else '0';
    m_early_conn <= early_conn_reg;

    ddp : entity work.ddp_rx
        generic map (
            DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W,
            ID_W => ID_W, BURST => BURST, REC_AW => REC_AW, AXI_W => AXI_W, WR_REQ => WR_REQ
        )
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => k_tdata, s_axis_tkeep => k_tkeep, s_axis_tvalid => k_tvalid,
            s_axis_tready => k_tready, s_axis_tlast => k_tlast, s_axis_tuser => k_tuser,
            s_verdict_tdata => jv_tdata, s_verdict_tuser => jv_tuser, s_verdict_tvalid => jv_tvalid,
            s_verdict_tready => jv_tready,
            s_conn_valid => s_conn_valid,
            s_conn_ready => s_conn_ready,
            s_conn_conn => s_conn_conn,
            s_conn_enable => s_conn_enable,
            s_conn_pd => s_conn_pd,
            s_stag_valid => s_stag_valid,
            s_stag_ready => s_stag_ready,
            s_stag_index => s_stag_index,
            s_stag_entry_valid => s_stag_entry_valid,
            s_stag_key => s_stag_key,
            s_stag_pd => s_stag_pd,
            s_stag_bound => s_stag_bound,
            s_stag_conn => s_stag_conn,
            s_stag_access => s_stag_access,
            s_stag_base => s_stag_base,
            s_stag_len => s_stag_len,
            s_stag_addr => s_stag_addr,
            s_post_valid => s_post_valid,
            s_post_ready => s_post_ready,
            s_post_conn => s_post_conn,
            s_post_qn => s_post_qn,
            s_post_addr => s_post_addr,
            s_post_len => s_post_len,
            s_post_id => s_post_id,
            m_axi_awid => m_axi_awid,
            m_axi_awaddr => m_axi_awaddr,
            m_axi_awlen => m_axi_awlen,
            m_axi_awsize => m_axi_awsize,
            m_axi_awburst => m_axi_awburst,
            m_axi_awcache => m_axi_awcache,
            m_axi_awprot => m_axi_awprot,
            m_axi_awvalid => m_axi_awvalid,
            m_axi_awready => m_axi_awready,
            m_axi_wdata => m_axi_wdata,
            m_axi_wstrb => m_axi_wstrb,
            m_axi_wlast => m_axi_wlast,
            m_axi_wvalid => m_axi_wvalid,
            m_axi_wready => m_axi_wready,
            m_axi_bid => m_axi_bid,
            m_axi_bresp => m_axi_bresp,
            m_axi_bvalid => m_axi_bvalid,
            m_axi_bready => m_axi_bready,
            m_wr_addr => m_wr_addr,
            m_wr_data => m_wr_data,
            m_wr_strb => m_wr_strb,
            m_wr_last => m_wr_last,
            m_wr_valid => m_wr_valid,
            m_wr_ready => m_wr_ready,
            m_cpl_valid => m_cpl_valid,
            m_cpl_ready => m_cpl_ready,
            m_cpl_conn => m_cpl_conn,
            m_cpl_opcode => m_cpl_opcode,
            m_cpl_tagged => m_cpl_tagged,
            m_cpl_qn => m_cpl_qn,
            m_cpl_msn => m_cpl_msn,
            m_cpl_len => m_cpl_len,
            m_cpl_id => m_cpl_id,
            m_cpl_stag => m_cpl_stag,
            m_cpl_inv_stag => m_cpl_inv_stag,
            m_cpl_rr => m_cpl_rr,
            m_err_valid => m_err_valid,
            m_err_ready => m_err_ready,
            m_err_conn => m_err_conn,
            m_err_layer => m_err_layer,
            m_err_etype => m_err_etype,
            m_err_code => m_err_code,
            m_err_hdrct => m_err_hdrct,
            m_err_seglen => m_err_seglen,
            m_err_hdr => m_err_hdr,
            m_drop_valid => m_drop_valid,
            m_drop_conn => m_drop_conn,
            m_drop_reason => m_drop_reason,
            m_drop_first => m_drop_first,
            m_drop_count => m_drop_count,
            m_post_err_valid => m_post_err_valid,
            m_post_err_conn => m_post_err_conn,
            m_post_err_qn => m_post_err_qn,
            m_post_err_id => m_post_err_id,
            m_post_err_reason => m_post_err_reason,
            m_berr_valid => m_berr_valid,
            m_berr_conn => m_berr_conn,
            m_berr_resp => m_berr_resp,
            m_done_valid => m_done_valid,
            m_done_conn => m_done_conn
        );
end architecture rtl;
