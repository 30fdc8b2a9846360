-- rnic_rx: the iWARP receive datapath, TCP segment payloads in, RDMAP
-- placement into host memory out, DATA_W bits per clock, for 2^CONN_W
-- connections:
--
--   s_axis -> mpa_rx -> rx_join -> merge -> ddp_rx -> m_axi, m_cpl, m_err, status
--               +-> mpa_rx_ooo ------^ (early ULPDUs)
--                      +-> m_exc, m_skip
--
-- VHDL-2008 twin of hw/rtl/rnic_rx.v: same generics, same ports, same
-- registers and clock counts, on the twins of its blocks; the Verilog
-- header has the interface and the out-of-order path in full. In brief:
-- mpa_rx finds the ULPDUs of each connection's in-order stream and cuts
-- them into pieces at segment boundaries, rx_join joins a first piece
-- until it holds the DDP/RDMAP header, ddp_rx checks and places. A segment
-- past a hole goes on to the host (m_exc) through mpa_rx_ooo, which finds
-- the whole FPDUs in it through their markers; the merge hands their
-- ULPDUs to ddp_rx between pieces as early ULPDUs (checked against the
-- connection's state, placed, never reported), frame by frame, the two
-- inputs in turn when both wait. cfg_* configures mpa_rx and mpa_rx_ooo
-- and clears rx_join's held octets in one handshake; fail_* marks a
-- connection in error in mpa_rx (its segments go to m_exc, reason 2);
-- s_conn, s_stag and s_post go to ddp_rx.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

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

    signal mpa_cfg_ready, clr_ready, ooo_cfg_ready, cfg_ready_i : std_logic;
    signal mpa_cfg_valid, clr_valid, ooo_cfg_valid : std_logic;

    signal p_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal p_tkeep : std_logic_vector(N - 1 downto 0);
    signal p_tvalid, p_tready, p_tlast : std_logic;
    signal p_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal pv_tdata : std_logic_vector(2 downto 0);
    signal pv_tvalid, pv_tready : std_logic;
    signal pv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal j_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal j_tkeep : std_logic_vector(N - 1 downto 0);
    signal j_tvalid, j_tready, j_tlast : std_logic;
    signal j_tuser : std_logic_vector(CONN_W + 17 downto 0);
    signal jv_tdata : std_logic_vector(2 downto 0);
    signal jv_tvalid, jv_tready : std_logic;
    signal jv_tuser : std_logic_vector(CONN_W - 1 downto 0);

    signal x_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal x_tkeep : std_logic_vector(N - 1 downto 0);
    signal x_tvalid, x_tready, x_tlast : std_logic;
    signal x_tuser : std_logic_vector(CONN_W + 50 downto 0);

    signal e_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal e_tkeep : std_logic_vector(N - 1 downto 0);
    signal e_tvalid, e_tready, e_tlast : std_logic;
    signal e_tuser : std_logic_vector(CONN_W + 47 downto 0);

    signal k_tdata : std_logic_vector(DATA_W - 1 downto 0);
    signal k_tkeep : std_logic_vector(N - 1 downto 0);
    signal k_tvalid, k_tready, k_tlast : std_logic;
    signal k_tuser : std_logic_vector(CONN_W + 18 downto 0);

    -- The merge (see rnic_rx.v).
    signal m_inf_reg : std_logic := '0';        -- inside a frame
    signal m_sel_reg : std_logic := '0';        -- its input ('1': early)
    signal m_last_reg : std_logic := '0';       -- the input of the last frame started
    signal m_pick : std_logic;
    signal early_valid_reg : std_logic := '0';
    signal early_conn_reg : std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
begin
    assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
        report "rnic_rx: DATA_W must be 64, 128, 256 or 512, not " & integer'image(DATA_W)
        severity failure;

    -- --- configuration: mpa_rx's, mpa_rx_ooo's and rx_join's clear at once ------------

    cfg_ready_i <= mpa_cfg_ready and clr_ready;
    cfg_ready <= cfg_ready_i;
    mpa_cfg_valid <= cfg_valid and clr_ready;
    clr_valid <= cfg_valid and mpa_cfg_ready;
    ooo_cfg_valid <= cfg_valid and cfg_ready_i;

    -- --- mpa_rx -> rx_join -> merge -> ddp_rx; mpa_rx_ooo on the exceptions ------------

    mpa : entity work.mpa_rx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            cfg_valid => mpa_cfg_valid, cfg_ready => mpa_cfg_ready, cfg_conn => cfg_conn,
            cfg_en => cfg_en, cfg_mrk_en => cfg_mrk_en, cfg_crc_en => cfg_crc_en, cfg_base => cfg_base,
            fail_valid => fail_valid, fail_ready => fail_ready, fail_conn => fail_conn,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep, s_axis_tvalid => s_axis_tvalid,
            s_axis_tready => s_axis_tready, s_axis_tlast => s_axis_tlast, s_axis_tuser => s_axis_tuser,
            m_axis_tdata => p_tdata, m_axis_tkeep => p_tkeep, m_axis_tvalid => p_tvalid,
            m_axis_tready => p_tready, m_axis_tlast => p_tlast, m_axis_tuser => p_tuser,
            m_verdict_tdata => pv_tdata, m_verdict_tvalid => pv_tvalid, m_verdict_tready => pv_tready,
            m_verdict_tuser => pv_tuser,
            m_exc_tdata => x_tdata, m_exc_tkeep => x_tkeep, m_exc_tvalid => x_tvalid,
            m_exc_tready => x_tready, m_exc_tlast => x_tlast, m_exc_tuser => x_tuser
        );

    ooo : entity work.mpa_rx_ooo
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, SEG_OCTETS => SEG_OCTETS)
        port map (
            clk => clk, rst => rst,
            cfg_valid => ooo_cfg_valid, cfg_ready => ooo_cfg_ready, cfg_conn => cfg_conn,
            cfg_mrk_en => cfg_mrk_en, cfg_crc_en => cfg_crc_en, cfg_base => cfg_base,
            s_exc_tdata => x_tdata, s_exc_tkeep => x_tkeep, s_exc_tvalid => x_tvalid,
            s_exc_tready => x_tready, s_exc_tlast => x_tlast, s_exc_tuser => x_tuser,
            m_exc_tdata => m_exc_tdata, m_exc_tkeep => m_exc_tkeep, m_exc_tvalid => m_exc_tvalid,
            m_exc_tready => m_exc_tready, m_exc_tlast => m_exc_tlast, m_exc_tuser => m_exc_tuser,
            m_early_tdata => e_tdata, m_early_tkeep => e_tkeep, m_early_tvalid => e_tvalid,
            m_early_tready => e_tready, m_early_tlast => e_tlast, m_early_tuser => e_tuser,
            m_skip_valid => m_skip_valid, m_skip_conn => m_skip_conn, m_skip_seq => m_skip_seq,
            m_skip_reason => m_skip_reason,
            busy => ooo_busy
        );

    joiner : entity work.rx_join
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => p_tdata, s_axis_tkeep => p_tkeep, s_axis_tvalid => p_tvalid,
            s_axis_tready => p_tready, s_axis_tlast => p_tlast, s_axis_tuser => p_tuser,
            m_axis_tdata => j_tdata, m_axis_tkeep => j_tkeep, m_axis_tvalid => j_tvalid,
            m_axis_tready => j_tready, m_axis_tlast => j_tlast, m_axis_tuser => j_tuser,
            s_verdict_tdata => pv_tdata, s_verdict_tvalid => pv_tvalid, s_verdict_tready => pv_tready,
            s_verdict_tuser => pv_tuser,
            m_verdict_tdata => jv_tdata, m_verdict_tvalid => jv_tvalid, m_verdict_tready => jv_tready,
            m_verdict_tuser => jv_tuser,
            clr_valid => clr_valid, clr_ready => clr_ready, clr_conn => cfg_conn
        );

    -- --- merge: rx_join's pieces and mpa_rx_ooo's early ULPDUs, frame by frame ---------

    m_pick <= m_sel_reg when m_inf_reg = '1' else
              e_tvalid and (not j_tvalid or not m_last_reg);

    k_tdata <= e_tdata when m_pick = '1' else j_tdata;
    k_tkeep <= e_tkeep when m_pick = '1' else j_tkeep;
    k_tvalid <= e_tvalid when m_pick = '1' else j_tvalid;
    k_tlast <= e_tlast when m_pick = '1' else j_tlast;
    k_tuser <= '1' & e_tuser(CONN_W + 15 downto CONN_W) & e_tuser(CONN_W - 1 downto 0) & "11"
               when m_pick = '1' else '0' & j_tuser;
    j_tready <= not m_pick and k_tready;
    e_tready <= m_pick and k_tready;

    p_merge : process (clk)
    begin
        if rising_edge(clk) then
            early_valid_reg <= '0';
            if k_tvalid = '1' and k_tready = '1' then
                m_inf_reg <= not k_tlast;
                m_sel_reg <= m_pick;
                if m_inf_reg = '0' then
                    m_last_reg <= m_pick;
                    early_valid_reg <= m_pick;
                    early_conn_reg <= e_tuser(CONN_W - 1 downto 0);
                end if;
            end if;
            if rst = '1' then
                m_inf_reg <= '0';
                m_last_reg <= '0';
                early_valid_reg <= '0';
            end if;
        end if;
    end process p_merge;

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
