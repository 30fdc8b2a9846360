-- ddp_rx_wport: ddp_rx's output queues and host write port.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_wport.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_wport is
    generic (
        DATA_W  : natural := 64;
        CONN_W  : natural := 10;
        STAG_AW : natural := 12;
        RQ_AW   : natural := 3;
        ADDR_W  : natural := 64;
        ID_W    : natural := 32;
        BURST   : natural := 8;
        REC_AW  : natural := 3;
        BQ_AW   : natural := 4;
        AXI_W   : natural := DATA_W; -- the host write port: DATA_W or 2 DATA_W
        WR_REQ  : natural := 0       -- 1: the write-request stream m_wr_* in its place
    );
    port (
        clk : in std_logic;
        rst : in std_logic;
        m_axi_awready : in std_logic;
        m_axi_wready : in std_logic;
        m_axi_bresp : in std_logic_vector(1 downto 0);
        m_axi_bvalid : in std_logic;
        m_wr_ready : in std_logic;
        aw_in_valid : in std_ulogic;
        aw_in_data : in std_ulogic_vector(ADDR_W + 8 - 1 downto 0);
        w_in_valid : in std_ulogic;
        w_in_data : in std_ulogic_vector(DATA_W + DATA_W / 8 + 1 - 1 downto 0);
        w2_in_valid : in std_ulogic;
        w2_in_data : in std_ulogic_vector(DATA_W + DATA_W / 8 + 1 - 1 downto 0);
        w_in_half : in std_ulogic;
        w2_in_half : in std_ulogic;
        rf_in_valid : in std_ulogic;
        rf_in_data : in rf_r(mark(BQ_AW + 2 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
        rf_out_ready : in std_ulogic;
        b_go : in std_ulogic;
        d_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        m_axi_awid : out std_logic_vector(0 downto 0);
        m_axi_awaddr : out std_logic_vector(ADDR_W - 1 downto 0);
        m_axi_awlen : out std_logic_vector(7 downto 0);
        m_axi_awsize : out std_logic_vector(2 downto 0);
        m_axi_awburst : out std_logic_vector(1 downto 0);
        m_axi_awcache : out std_logic_vector(3 downto 0);
        m_axi_awprot : out std_logic_vector(2 downto 0);
        m_axi_awvalid : out std_logic;
        m_axi_wdata : out std_logic_vector(AXI_W - 1 downto 0);
        m_axi_wstrb : out std_logic_vector(AXI_W / 8 - 1 downto 0);
        m_axi_wlast : out std_logic;
        m_axi_wvalid : out std_logic;
        m_wr_addr : out std_logic_vector(ADDR_W - 1 downto 0);
        m_wr_data : out std_logic_vector(AXI_W - 1 downto 0);
        m_wr_strb : out std_logic_vector(AXI_W / 8 - 1 downto 0);
        m_wr_last : out std_logic;
        m_wr_valid : out std_logic;
        aw_in_ready : out std_ulogic := '0';
        w_in_ready : out std_ulogic := '0';
        w_in_ready2 : out std_ulogic := '0';
        b_valid : out std_ulogic := '0';
        b_resp : out std_logic_vector(1 downto 0) := (others => '0');
        rf_in_ready : out std_ulogic := '0';
        rf_out_data : out rf_r(mark(BQ_AW + 2 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0))) := rf_zero(CONN_W, ID_W, BQ_AW);
        rf_out_valid : out std_ulogic := '0';
        bq_in_ready : out std_ulogic := '0';
        bq_out_data : out std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        bq_out_valid : out std_ulogic := '0';
        aw_cnt_reg : out unsigned(BQ_AW + 3 - 1 downto 0) := (others => '0');
        b_cnt_reg : out unsigned(BQ_AW + 3 - 1 downto 0) := (others => '0');
        b_cnt1_reg : out unsigned(BQ_AW + 3 - 1 downto 0) := to_unsigned(1, (BQ_AW + 3));
        wq_busy : out std_ulogic := '0'
    );
end entity ddp_rx_wport;

architecture rtl of ddp_rx_wport is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    signal aw_out_data : std_logic_vector(AWQ_W_c - 1 downto 0) := (others => '0');
    signal aw_out_valid : std_ulogic := '0';
    signal w_out_data : std_logic_vector(W_W_c - 1 downto 0) := (others => '0');
    signal w_out_valid : std_ulogic := '0';
    -- W beats go once their burst's AW is valid, not only once it is taken
    -- (AXI4 A3.3.1: a master must not wait for AWREADY before asserting
    -- WVALID). w_credit counts the AWs taken less the bursts whose last W
    -- beat has gone, -1 (a burst's W beats all gone before its AW was
    -- taken) to 15: above 0, the W head is an AW's that was taken; at 0, it
    -- belongs to the AW at the head of its queue (AWs are queued with their
    -- burst's first W beat).
    signal w_credit_reg : signed(4 downto 0) := (others => '0');
    signal w_ok : std_ulogic := '0';
    signal w_go, w_out_ready : std_ulogic := '0';
    signal w_out_last : std_ulogic := '0';         -- a bus beat with WLAST taken
    signal axi_awvalid, axi_wlast : std_ulogic := '0';
    -- the AW queue's head taken; the B responses the delivery waits for
    -- (the port's, or with WR_REQ = 1 an OKAY per burst once its last
    -- request has gone: see the Verilog)
    signal aw_pop : std_ulogic := '0';

    signal rf_out_bits : std_logic_vector(RF_W_c - 1 downto 0) := (others => '0');   -- rec_fifo's head, packed

begin

    aw_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => AWQ_W_c, AW => 2)
        port map (
            clk => clk, rst => rst,
            in_data => aw_in_data, in_valid => aw_in_valid, in_ready => aw_in_ready,
            in_data2 => aw_in_data, in_valid2 => '0', in_ready2 => open,
            out_data => aw_out_data, out_valid => aw_out_valid, out_ready => aw_pop
        );

    w_ok <= to_sl(w_credit_reg > 0) or (to_sl(w_credit_reg = 0) and axi_awvalid);

    m_axi_awid <= "0";
    m_axi_awburst <= "01";                  -- INCR
    m_axi_awcache <= "0011";
    m_axi_awprot <= "010";
    m_axi_awvalid <= axi_awvalid;

    g_axiport : if WR_REQ = 0 generate
        axi_awvalid <= aw_out_valid;
        aw_pop <= m_axi_awready;
        b_valid <= m_axi_bvalid;
        b_resp <= m_axi_bresp;
        m_wr_addr <= (others => '0');
        m_wr_data <= (others => '0');
        m_wr_strb <= (others => '0');
        m_wr_last <= '0';
        m_wr_valid <= '0';
    end generate g_axiport;

    g_wport : if WR_REQ = 0 and AXI_W = DATA_W generate
        -- One queued W beat a bus beat.
        w_go <= w_out_valid and w_ok;
        w_out_ready <= m_axi_wready and w_ok;

        w_fifo : entity work.ddp_rx_fifo
            generic map (WIDTH => W_W_c, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in_data, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w2_in_data, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_out_data, out_valid => w_out_valid, out_ready => w_out_ready
            );

        axi_wlast <= w_out_data(0);
        m_axi_awaddr <= aw_out_data(AWQ_W_c - 1 downto 8);
        m_axi_awlen <= aw_out_data(7 downto 0);
        m_axi_awsize <= std_logic_vector(to_unsigned(LG_c, 3));
        m_axi_wdata <= w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_axi_wstrb <= w_out_data(KEEP_W_c downto 1);
        m_axi_wlast <= axi_wlast;
        m_axi_wvalid <= w_go;
        w_out_last <= w_go and m_axi_wready and axi_wlast;
    elsif WR_REQ = 0 generate
        -- A write port twice as wide: a bus beat carries two queued W beats
        -- (an even one and the odd one after it, by address bit LG) or one;
        -- see the Verilog for the burst arithmetic. Each W beat is queued
        -- with bit LG of its address, the half a burst's first beat takes.
        signal w_in1, w_in2, w_h0x, w_h1 : std_logic_vector(W_W_c downto 0) := (others => '0');
        signal w_h1v : std_ulogic := '0';
        signal w_bfirst_reg : std_ulogic := '1';        -- the next W beat starts its burst
        signal w_odd, w_two, w2_go, w2_take : std_ulogic := '0';
        signal aw_len2 : unsigned(8 downto 0) := (others => '0');
        signal zd, hi_d : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        signal zk, hi_k : std_logic_vector(KEEP_W_c - 1 downto 0) := (others => '0');
    begin
        w_in1 <= w_in_data & w_in_half;
        w_in2 <= w2_in_data & w2_in_half;
        w_out_data <= w_h0x(W_W_c downto 1);
        w_odd <= w_bfirst_reg and w_h0x(0);
        w_two <= (not w_odd) and (not w_out_data(0));
        w2_go <= w_out_valid and (w_odd or w_out_data(0) or w_h1v) and w_ok;
        w2_take <= w2_go and m_axi_wready;
        aw_len2 <= resize(unsigned(aw_out_data(8 + LG_c downto 8 + LG_c)), 9)
                   + resize(unsigned(aw_out_data(7 downto 0)), 9);

        w_fifo : entity work.ddp_rx_fifo2
            generic map (WIDTH => W_W_c + 1, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in1, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w_in2, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_h0x, out_valid => w_out_valid, out_ready => w2_take,
                out_data2 => w_h1, out_valid2 => w_h1v, out_ready2 => w_two
            );

        p_bfirst : process (clk) is
        begin
            if rising_edge(clk) then
                if w2_take = '1' then
                    w_bfirst_reg <= axi_wlast;
                end if;
                if rst = '1' then
                    w_bfirst_reg <= '1';
                end if;
            end if;
        end process p_bfirst;

        axi_wlast <= w_h1(1) when w_two = '1' else w_out_data(0);
        m_axi_awaddr <= aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + 1) & (LG_c downto 0 => '0');
        m_axi_awlen <= std_logic_vector(aw_len2(8 downto 1));
        m_axi_awsize <= std_logic_vector(to_unsigned(LG_c + 1, 3));
        hi_d <= w_h1(DATA_W + KEEP_W_c + 1 downto KEEP_W_c + 2) when w_two = '1' else zd;
        hi_k <= w_h1(KEEP_W_c + 1 downto 2) when w_two = '1' else zk;
        m_axi_wdata <= w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1) & zd when w_odd = '1' else
                       hi_d & w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_axi_wstrb <= w_out_data(KEEP_W_c downto 1) & zk when w_odd = '1' else
                       hi_k & w_out_data(KEEP_W_c downto 1);
        m_axi_wlast <= axi_wlast;
        m_axi_wvalid <= w2_go;
        w_out_last <= w2_take and axi_wlast;
    else generate
        -- The write-request stream (see the Verilog's reqport): two lines a
        -- request from a line address; the oldest queued W beat and, unless
        -- it ends its burst (or when the one behind it is a continuation,
        -- its queue bit set), the one behind it, which a request waits for
        -- but at a burst's first beat. A continuation alone goes
        -- at the first line of the block after its burst's (r_nb_reg).
        signal w_in1, w_in2, w_h0x, w_h1 : std_logic_vector(W_W_c downto 0) := (others => '0');
        signal w_h1v : std_ulogic := '0';
        signal r_k_reg : unsigned(BW_c - 1 downto 0) := (others => '0');      -- W beats of the head burst gone
        signal r_b_reg : unsigned(BQ_AW + 1 downto 0) := (others => '0');     -- bursts gone, B not yet taken
        signal r_nb_reg : unsigned(ADDR_W - LG_c - BW_c - 1 downto 0) := (others => '0');
        signal r_h0last, r_h0cont, r_two, r_go, r_take, r_last, r_burst : std_ulogic := '0';
        -- A request offered as one line and not taken stays one line until
        -- it is: its payload must not change while it waits.
        signal r_one_reg : std_ulogic := '0';
        signal r_line : unsigned(BW_c - 1 downto 0) := (others => '0');
        signal hi_d : std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        signal hi_k : std_logic_vector(KEEP_W_c - 1 downto 0) := (others => '0');
    begin
        w_in1 <= w_in_data & '0';
        w_in2 <= w2_in_data & w_in_data(0);
        w_out_data <= w_h0x(W_W_c downto 1);
        r_h0last <= w_out_data(0);
        r_h0cont <= w_h0x(0);
        r_two <= w_h1v and (not r_one_reg) and ((not r_h0last) or w_h1(0));
        r_go <= w_out_valid and (aw_out_valid or r_h0cont) and (r_h0last or w_h1v or to_sl(r_k_reg = 0));
        r_take <= r_go and m_wr_ready;
        r_last <= w_h1(1) when r_two = '1' else r_h0last;
        r_burst <= r_take and r_last and not r_h0cont;
        r_line <= unsigned(aw_out_data(8 + LG_c + BW_c - 1 downto 8 + LG_c)) + r_k_reg;

        w_fifo : entity work.ddp_rx_fifo2
            generic map (WIDTH => W_W_c + 1, AW => 2)
            port map (
                clk => clk, rst => rst,
                in_data => w_in1, in_valid => w_in_valid, in_ready => w_in_ready,
                in_data2 => w_in2, in_valid2 => w2_in_valid, in_ready2 => w_in_ready2,
                out_data => w_h0x, out_valid => w_out_valid, out_ready => r_take,
                out_data2 => w_h1, out_valid2 => w_h1v, out_ready2 => r_two
            );

        p_req : process (clk) is
        begin
            if rising_edge(clk) then
                if r_take = '1' then
                    if r_last = '1' then
                        r_k_reg <= (others => '0');
                    elsif r_two = '1' then
                        r_k_reg <= r_k_reg + 2;
                    else
                        r_k_reg <= r_k_reg + 1;
                    end if;
                end if;
                if r_burst = '1' then
                    r_nb_reg <= unsigned(aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + BW_c)) + 1;
                end if;
                if r_burst = '1' and b_go = '0' then
                    r_b_reg <= r_b_reg + 1;
                elsif r_burst = '0' and b_go = '1' then
                    r_b_reg <= r_b_reg - 1;
                end if;
                r_one_reg <= r_go and (not m_wr_ready) and (not r_two);
                if rst = '1' then
                    r_k_reg <= (others => '0');
                    r_b_reg <= (others => '0');
                    r_one_reg <= '0';
                end if;
            end if;
        end process p_req;

        hi_d <= w_h1(DATA_W + KEEP_W_c + 1 downto KEEP_W_c + 2) when r_two = '1' else (others => '0');
        hi_k <= w_h1(KEEP_W_c + 1 downto 2) when r_two = '1' else (others => '0');
        m_wr_addr <= std_logic_vector(r_nb_reg) & (BW_c + LG_c - 1 downto 0 => '0') when r_h0cont = '1' else
                     aw_out_data(AWQ_W_c - 1 downto 8 + LG_c + BW_c) & std_logic_vector(r_line)
                     & (LG_c - 1 downto 0 => '0');
        m_wr_data <= hi_d & w_out_data(DATA_W + KEEP_W_c downto KEEP_W_c + 1);
        m_wr_strb <= hi_k & w_out_data(KEEP_W_c downto 1);
        m_wr_last <= r_last;
        m_wr_valid <= r_go;
        aw_pop <= r_burst;
        b_valid <= to_sl(r_b_reg /= 0);
        b_resp <= "00";
        w_out_last <= '0';
        axi_awvalid <= '0';
        m_axi_awaddr <= (others => '0');
        m_axi_awlen <= (others => '0');
        m_axi_awsize <= (others => '0');
        m_axi_wdata <= (others => '0');
        m_axi_wstrb <= (others => '0');
        m_axi_wlast <= '0';
        m_axi_wvalid <= '0';
    end generate g_wport;

    p_credit : process (clk) is
        variable c : signed(4 downto 0);
    begin
        if rising_edge(clk) then
            c := w_credit_reg;
            if axi_awvalid = '1' and m_axi_awready = '1' then
                c := c + 1;
            end if;
            if w_out_last = '1' then
                c := c - 1;
            end if;
            w_credit_reg <= c;
            if rst = '1' then
                w_credit_reg <= (others => '0');
            end if;
        end if;
    end process p_credit;

    rec_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => RF_W_c, AW => REC_AW)
        port map (
            clk => clk, rst => rst,
            in_data => to_slv(rf_in_data), in_valid => rf_in_valid, in_ready => rf_in_ready,
            in_data2 => to_slv(rf_in_data), in_valid2 => '0', in_ready2 => open,
            out_data => rf_out_bits, out_valid => rf_out_valid, out_ready => rf_out_ready
        );

    -- Bursts whose B response is outstanding: the connection of each, in AW
    -- order. aw_cnt counts the bursts queued, b_cnt the B responses taken.
    bq_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => CONN_W, AW => BQ_AW)
        port map (
            clk => clk, rst => rst,
            in_data => d_conn_reg, in_valid => aw_in_valid, in_ready => bq_in_ready,
            in_data2 => d_conn_reg, in_valid2 => '0', in_ready2 => open,
            out_data => bq_out_data, out_valid => bq_out_valid, out_ready => b_go
        );

    p_bcnt : process (clk) is
    begin
        if rising_edge(clk) then
            if aw_in_valid = '1' and aw_in_ready = '1' then
                aw_cnt_reg <= aw_cnt_reg + 1;
            end if;
            if b_go = '1' then
                b_cnt_reg <= b_cnt1_reg;
                b_cnt1_reg <= b_cnt1_reg + 1;
            end if;
            if rst = '1' then
                aw_cnt_reg <= (others => '0');
                b_cnt_reg <= (others => '0');
                b_cnt1_reg <= to_unsigned(1, MK_W_c);
            end if;
        end if;
    end process p_bcnt;

    -- The fence (s_stag, s_conn; see the Verilog, ddp_rx_tables.v): also
    -- every write placed so far taken by the port and answered; and not
    -- while the tables are cleared after reset.
    wq_busy <= aw_out_valid or w_out_valid;
    rf_out_data <= to_rf(rf_out_bits, CONN_W, ID_W, BQ_AW);

end architecture rtl;
