-- ddp_rx_tables: ddp_rx's tables and configuration.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_tables.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_tables is
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
        s_conn_valid : in std_logic;
        s_conn_conn : in std_logic_vector(CONN_W - 1 downto 0);
        s_conn_enable : in std_logic;
        s_conn_pd : in std_logic_vector(31 downto 0);
        s_stag_valid : in std_logic;
        s_stag_index : in std_logic_vector(STAG_AW - 1 downto 0);
        s_stag_entry_valid : in std_logic;
        s_stag_key : in std_logic_vector(7 downto 0);
        s_stag_pd : in std_logic_vector(31 downto 0);
        s_stag_bound : in std_logic;
        s_stag_conn : in std_logic_vector(CONN_W - 1 downto 0);
        s_stag_access : in std_logic_vector(1 downto 0);
        s_stag_base : in std_logic_vector(63 downto 0);
        s_stag_len : in std_logic_vector(31 downto 0);
        s_stag_addr : in std_logic_vector(ADDR_W - 1 downto 0);
        s_post_valid : in std_logic;
        s_post_conn : in std_logic_vector(CONN_W - 1 downto 0);
        s_post_qn : in std_logic_vector(1 downto 0);
        s_post_addr : in std_logic_vector(ADDR_W - 1 downto 0);
        s_post_len : in std_logic_vector(31 downto 0);
        s_post_id : in std_logic_vector(ID_W - 1 downto 0);
        dx_rd_en : in std_ulogic;
        dx_rd_addr : in std_ulogic_vector(CONN_W - 1 downto 0);
        i_inpiece_reg : in std_ulogic;
        df_out_valid : in std_ulogic;
        hf_out_valid : in std_ulogic;
        c_adv : in std_ulogic;
        h_valid : in std_ulogic;
        hf_conn : in std_ulogic_vector(CONN_W - 1 downto 0);
        hf_hdr : in std_ulogic_vector(143 downto 0);
        hf_idx32 : in unsigned(31 downto 0);
        c1_valid_reg : in std_ulogic;
        b_valid_reg : in std_ulogic;
        c2_valid_reg : in std_ulogic;
        c2_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        e_st_reg : in std_ulogic_vector(st_w(CONN_W, ADDR_W) - 2 downto 0);
        k_idx : in std_ulogic_vector(STAG_AW - 1 downto 0);
        r_inval : in std_ulogic;
        r_cx : in cx_r(qs(3 * (32 + RQ_AW + 1) - 1 downto 0));
        c2_decide : in std_ulogic;
        dc_out_valid : in std_ulogic;
        aw_cnt_reg : in unsigned(BQ_AW + 3 - 1 downto 0);
        d2_valid_reg : in std_ulogic;
        d4_valid_reg : in std_ulogic;
        pl_empty : in std_ulogic;
        e2_last_reg : in std_ulogic;
        e2_en_reg : in std_ulogic;
        e2_early_reg : in std_ulogic;
        e2_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        e2_rec_reg : in rec_r(id(ID_W - 1 downto 0));
        e2_rr_reg : in std_ulogic_vector(223 downto 0);
        e4_place_reg : in std_ulogic;
        e4_conn_reg : in std_ulogic_vector(CONN_W - 1 downto 0);
        e4_rec_reg : in rec_r(id(ID_W - 1 downto 0));
        e4_rr_reg : in std_ulogic_vector(223 downto 0);
        e4_nxt : in unsigned(ADDR_W - 1 downto 0);
        e4_left : in unsigned(15 downto 0);
        s_conn_ready : out std_logic;
        s_stag_ready : out std_logic;
        s_post_ready : out std_logic;
        cx_rd_data : out cx_r(qs(3 * (32 + RQ_AW + 1) - 1 downto 0)) := cx_zero(RQ_AW);
        dx_rd_data : out dx_r(nxt(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0))) := dx_zero(ADDR_W, ID_W);
        st_rd_data : out std_logic_vector(st_w(CONN_W, ADDR_W) - 1 downto 0) := (others => '0');
        rg_rd_data : out std_logic_vector(rg_w(ADDR_W, ID_W) - 1 downto 0) := (others => '0');
        cf_post_reg : out std_ulogic := '0';
        rf_in_valid : out std_ulogic := '0';
        rf_in_data : out rf_r(mark(BQ_AW + 2 downto 0), conn(CONN_W - 1 downto 0), rec(id(ID_W - 1 downto 0))) := rf_zero(CONN_W, ID_W, BQ_AW);
        cf_conn : out std_ulogic := '0';
        cf_stag : out std_ulogic := '0';
        clr_busy_reg : out std_ulogic := '0';
        o_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        o_qn_reg : out unsigned(1 downto 0) := (others => '0');
        o_ent_reg : out std_ulogic_vector(rg_w(ADDR_W, ID_W) - 1 downto 0) := (others => '0');
        o_ok : out std_ulogic := '0';
        wq_busy : in std_ulogic;
        bq_out_valid : in std_ulogic;
        rs_busy : in std_ulogic
    );
end entity ddp_rx_tables;

architecture rtl of ddp_rx_tables is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype cx_t is cx_r(qs(3 * Q_W_c - 1 downto 0));
    subtype dx_t is dx_r(nxt(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
    constant CX_ZERO_c : cx_t := cx_zero(RQ_AW);
    constant DX_ZERO_c : dx_t := dx_zero(ADDR_W, ID_W);

    signal cx_wr_en   : std_ulogic := '0';
    signal cx_wr_addr : conn_t := (others => '0');
    signal cx_wr_data : cx_t := CX_ZERO_c;
    signal cx_rd_en   : std_ulogic := '0';
    signal cx_rd_addr : conn_t := (others => '0');
    signal dx_wr_en   : std_ulogic := '0';
    signal dx_wr_addr : conn_t := (others => '0');
    signal dx_wr_data : dx_t := DX_ZERO_c;
    signal st_wr_en   : std_ulogic := '0';
    signal st_wr_addr : stagi_t := (others => '0');
    signal st_wr_data : st_t := (others => '0');
    signal st_rd_en   : std_ulogic := '0';
    signal st_rd_addr : stagi_t := (others => '0');
    signal rg_wr_en   : std_ulogic := '0';
    signal rg_wr_addr : std_ulogic_vector(RG_AW_c - 1 downto 0) := (others => '0');
    signal rg_wr_data : rg_t := (others => '0');
    signal rg_rd_en   : std_ulogic := '0';
    signal rg_rd_addr : std_ulogic_vector(RG_AW_c - 1 downto 0) := (others => '0');
    signal all_idle, conn_ready, stag_ready, post_ready : std_ulogic := '0';
    signal fence_idle : std_ulogic := '0';
    signal clr_addr_reg : unsigned(CLR_AW_c - 1 downto 0) := (others => '0');
    signal cf_post : std_ulogic := '0';
    signal o_first : u32_t := (others => '0');
    signal o_cnt : qcnt_t := (others => '0');
    signal o_cx : cx_t := CX_ZERO_c;
    -- The tables' words (to_slv of a record).
    signal cx_rd_bits : std_logic_vector(CX_W_c - 1 downto 0) := (others => '0');
    signal dx_rd_bits : std_logic_vector(DX_W_c - 1 downto 0) := (others => '0');

begin

    ctx_ram : entity work.sdp_ram
        generic map (WIDTH => CX_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => cx_wr_en, wr_addr => cx_wr_addr, wr_data => to_slv(cx_wr_data),
            rd_en => cx_rd_en, rd_addr => cx_rd_addr, rd_data => cx_rd_bits
        );

    -- The placement context, written at the end of every piece that does not
    -- end its ULPDU and read by the next piece of the same ULPDU.
    place_ram : entity work.sdp_ram
        generic map (WIDTH => DX_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => dx_wr_en, wr_addr => dx_wr_addr, wr_data => to_slv(dx_wr_data),
            rd_en => dx_rd_en, rd_addr => dx_rd_addr, rd_data => dx_rd_bits
        );

    stag_ram : entity work.sdp_ram
        generic map (WIDTH => ST_W_c, ADDR_W => STAG_AW)
        port map (
            clk => clk,
            wr_en => st_wr_en, wr_addr => st_wr_addr, wr_data => st_wr_data,
            rd_en => st_rd_en, rd_addr => st_rd_addr, rd_data => st_rd_data
        );

    ring_ram : entity work.sdp_ram
        generic map (WIDTH => RG_W_c, ADDR_W => RG_AW_c)
        port map (
            clk => clk,
            wr_en => rg_wr_en, wr_addr => rg_wr_addr, wr_data => rg_wr_data,
            rd_en => rg_rd_en, rd_addr => rg_rd_addr, rd_data => rg_rd_data
        );

    all_idle <= (not i_inpiece_reg) and (not hf_out_valid) and (not c1_valid_reg) and (not b_valid_reg)
                and (not c2_valid_reg) and (not dc_out_valid) and pl_empty and (not df_out_valid)
                and not cf_post_reg;

    fence_idle <= all_idle and (not wq_busy) and not bq_out_valid;
    conn_ready <= fence_idle and (not rs_busy) and not clr_busy_reg;
    stag_ready <= fence_idle and (not clr_busy_reg) and not s_conn_valid;
    post_ready <= all_idle and (not clr_busy_reg) and (not s_conn_valid) and not s_stag_valid;
    s_conn_ready <= conn_ready;
    s_stag_ready <= stag_ready;
    s_post_ready <= post_ready;

    cf_conn <= s_conn_valid and conn_ready;
    cf_stag <= s_stag_valid and stag_ready;
    cf_post <= s_post_valid and post_ready;

    -- After reset: every context, placement context and STag entry cleared,
    -- one of each a clock, the ready outputs low meanwhile (ddp_rx_tables.v).
    p_clr_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if clr_busy_reg = '1' then
                clr_addr_reg <= clr_addr_reg + 1;
                if clr_addr_reg = to_unsigned(2 ** CLR_AW_c - 1, CLR_AW_c) then
                    clr_busy_reg <= '0';
                end if;
            end if;
            if rst = '1' then
                clr_busy_reg <= '1';
                clr_addr_reg <= (others => '0');
            end if;
        end if;
    end process p_clr_reg;

    p_cf_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if cf_post = '1' then
                o_conn_reg <= s_post_conn;
                o_qn_reg <= unsigned(s_post_qn);
                o_ent_reg <= s_post_addr & s_post_len & s_post_id;
            end if;
            cf_post_reg <= cf_post;
            if rst = '1' then
                cf_post_reg <= '0';
            end if;
        end if;
    end process p_cf_reg;

    p_o : process (all) is
        variable cx : cx_t;
        variable q : q_t;
        variable first : u32_t;
        variable cnt : qcnt_t;
        variable nq : q_t;
    begin
        cx := cx_rd_data;
        q := cx_q(cx.qs, std_ulogic_vector(o_qn_reg));
        first := unsigned(q(Q_W_c - 1 downto RQ_AW + 1));
        cnt := unsigned(q(RQ_AW downto 0));
        o_first <= first;
        o_cnt <= cnt;
        o_ok <= cx.en and to_sl(o_qn_reg /= 3) and to_sl(cnt /= QFULL_c);
        nq := std_ulogic_vector(first) & std_ulogic_vector(cnt + 1);
        case o_qn_reg is
            when "01" => cx.qs(2 * Q_W_c - 1 downto Q_W_c) := nq;
            when "10" => cx.qs(3 * Q_W_c - 1 downto 2 * Q_W_c) := nq;
            when others => cx.qs(Q_W_c - 1 downto 0) := nq;
        end case;
        o_cx <= cx;
    end process p_o;

    -- Table ports: the pipeline's, or configuration's while it is empty.
    p_tables : process (all) is
    begin
        cx_rd_en <= h_valid and c_adv;
        cx_rd_addr <= hf_conn;
        st_rd_en <= h_valid and c_adv;
        st_rd_addr <= std_ulogic_vector(hf_idx32(8 + STAG_AW - 1 downto 8));
        rg_rd_en <= h_valid and c_adv;
        rg_rd_addr <= hf_conn & hf_hdr(8 * 9 + 1 downto 8 * 9) & hf_hdr(8 * 13 + RQ_AW - 1 downto 8 * 13);
        cx_wr_en <= c2_decide;
        cx_wr_addr <= c2_conn_reg;
        cx_wr_data <= r_cx;
        st_wr_en <= c2_decide and r_inval;
        st_wr_addr <= k_idx;
        st_wr_data <= '0' & e_st_reg;
        rg_wr_en <= '0';
        rg_wr_addr <= o_conn_reg & std_ulogic_vector(o_qn_reg)
                      & std_ulogic_vector(o_first(RQ_AW - 1 downto 0) + o_cnt(RQ_AW - 1 downto 0));
        rg_wr_data <= o_ent_reg;
        dx_wr_en <= d4_valid_reg;
        dx_wr_addr <= e4_conn_reg;
        dx_wr_data <= (place => e4_place_reg, nxt => e4_nxt, remain => e4_left, rec => e4_rec_reg, rr => e4_rr_reg);
        rf_in_valid <= d2_valid_reg and e2_last_reg and not e2_early_reg;
        rf_in_data <= (en => e2_en_reg, mark => aw_cnt_reg, conn => e2_conn_reg, rec => e2_rec_reg, rr => e2_rr_reg);
        if cf_conn = '1' then
            -- (Re)start a connection (RFC 5041 4.3: every queue at MSN 1).
            cx_wr_en <= '1';
            cx_wr_addr <= s_conn_conn;
            cx_wr_data <= (en => s_conn_enable, pd => s_conn_pd, fail => '0', qs => Q_INIT_c & Q_INIT_c & Q_INIT_c);
            dx_wr_en <= '1';
            dx_wr_addr <= s_conn_conn;
            dx_wr_data <= DX_ZERO_c;
        elsif cf_stag = '1' then
            st_wr_en <= '1';
            st_wr_addr <= s_stag_index;
            st_wr_data <= s_stag_entry_valid & s_stag_key & s_stag_pd & s_stag_bound & s_stag_conn
                          & s_stag_access & s_stag_base & s_stag_len & s_stag_addr;
        elsif cf_post = '1' then
            cx_rd_en <= '1';
            cx_rd_addr <= s_post_conn;
        end if;
        if cf_post_reg = '1' and o_ok = '1' then
            -- The buffer takes the MSN after the last posted one (4.3).
            rg_wr_en <= '1';
            cx_wr_en <= '1';
            cx_wr_addr <= o_conn_reg;
            cx_wr_data <= o_cx;
        end if;
        if clr_busy_reg = '1' then
            -- The clear after reset (nothing else moves meanwhile).
            cx_wr_en <= '1';
            cx_wr_addr <= std_ulogic_vector(clr_addr_reg(CONN_W - 1 downto 0));
            cx_wr_data <= (en => '0', pd => x"00000000", fail => '0', qs => Q_INIT_c & Q_INIT_c & Q_INIT_c);
            dx_wr_en <= '1';
            dx_wr_addr <= std_ulogic_vector(clr_addr_reg(CONN_W - 1 downto 0));
            dx_wr_data <= DX_ZERO_c;
            st_wr_en <= '1';
            st_wr_addr <= std_ulogic_vector(clr_addr_reg(STAG_AW - 1 downto 0));
            st_wr_data <= (others => '0');
        end if;
    end process p_tables;

    cx_rd_data <= to_cx(cx_rd_bits, RQ_AW);
    dx_rd_data <= to_dx(dx_rd_bits, ADDR_W, ID_W);

end architecture rtl;
