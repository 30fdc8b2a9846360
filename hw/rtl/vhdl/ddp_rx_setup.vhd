-- ddp_rx_setup: stage D0 of ddp_rx's placement, a piece's set-up.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_setup.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_setup is
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
        herr_reg : in std_ulogic_vector(2 ** CONN_W - 1 downto 0);
        herr_set : in std_ulogic;
        herr_set_conn : in std_ulogic_vector(CONN_W - 1 downto 0);
        cf_conn : in std_ulogic;
        s_conn_conn : in std_logic_vector(CONN_W - 1 downto 0);
        cf_stag : in std_ulogic;
        s_stag_index : in std_logic_vector(STAG_AW - 1 downto 0);
        dx_rd_data : in dx_r(nxt(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
        dc_out : in dc_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                      su(su_w(DATA_W) - 1 downto 0));
        dc_out_valid : in std_ulogic;
        d1_active_reg : in std_ulogic;
        d2_valid_reg : in std_ulogic;
        d3_valid_reg : in std_ulogic;
        d4_valid_reg : in std_ulogic;
        d0_take : in std_ulogic;
        dx_rd_en : out std_ulogic := '0';
        dx_rd_addr : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        dc_out_ready : out std_ulogic := '0';
        d0_valid_reg : out std_ulogic := '0';
        pl_empty : out std_ulogic := '0';
        d0 : out d0_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                 r(clog2(DATA_W / 8) - 1 downto 0), win0(DATA_W / 8 - 1 downto 0), win1(DATA_W / 8 - 1 downto 0),
                 lo(DATA_W / 8 - 1 downto 0), hi(DATA_W / 8 - 1 downto 0), waddr(ADDR_W - 1 downto 0),
                 bofs(clog2(BURST) - 1 downto 0)) := d0_zero(DATA_W, CONN_W, ADDR_W, ID_W, clog2(BURST));
        cut_reg : out std_ulogic_vector(2 ** CONN_W - 1 downto 0) := (others => '0');
        cut_set : out std_ulogic := '0';
        cut_set_conn : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0')
    );
end entity ddp_rx_setup;

architecture rtl of ddp_rx_setup is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    subtype dx_t is dx_r(nxt(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);

    signal g_early, g_first, g_en, g_dplace : std_ulogic := '0';
    signal g_conn : conn_t := (others => '0');
    signal g_ddest : addr_t := (others => '0');
    signal g_ds : u5_t := (others => '0');
    signal g_dremain : u16_t := (others => '0');
    signal g_drec : rec_t := REC_ZERO_c;
    signal g_dsu : su_t := (others => '0');
    signal g_fetch_reg, g_fetch2_reg : std_ulogic := '0';
    signal g_fconn_reg : conn_t := (others => '0');
    signal g_fen_reg : std_ulogic := '0';
    signal gx_place_reg : std_ulogic := '0';
    signal gx_dest_reg : addr_t := (others => '0');
    signal gx_remain_reg : u16_t := (others => '0');
    signal gx_rec_reg : rec_t := REC_ZERO_c;
    signal gx_rr_reg : rr_t := (others => '0');
    signal gx_su_reg : su_t := (others => '0');
    signal gx_tag_reg : std_ulogic := '0';               -- the ULPDU is tagged
    signal gx_gen_reg : gen_t := (others => '0');       -- its STag entry's generation at its first piece
    -- STag generations, the cut of a ULPDU between its pieces (ddp_rx_setup.v
    -- has the design): sg_gen_reg counts the s_stag writes, stgen_ram keeps
    -- the count at each entry's last write, tgen_ram a tagged ULPDU's at its
    -- first piece (for its connection); a later piece compares the two in
    -- g_fetch2, and cut_reg marks a cut connection (a clock later: cut_set)
    -- until s_conn.
    signal sg_gen_reg : gen_t := (others => '0');
    signal sg_rd_data, tg_rd_data : std_logic_vector(GEN_W_c - 1 downto 0) := (others => '0');
    signal sg_rd_addr : stagi_t := (others => '0');
    signal tg_wr_reg : std_ulogic := '0';
    signal tg_conn_reg : conn_t := (others => '0');
    signal g_cut : std_ulogic := '0';
    -- A first piece's cut bit as D0 loads it (cut_reg's, or cut_set's that
    -- clock), masking its place bit as D1 takes it.
    signal d0_cut_reg, d0_cutf_reg, d0_place_q : std_ulogic := '0';
    signal g_load, g_pfirst, g_pen, g_place, g_pearly : std_ulogic := '0';
    signal g_pconn : conn_t := (others => '0');
    signal g_dest : addr_t := (others => '0');
    signal g_s : u5_t := (others => '0');
    signal g_remain : u16_t := (others => '0');
    signal g_rec : rec_t := REC_ZERO_c;
    signal g_rr : rr_t := (others => '0');
    signal g_su : su_t := (others => '0');
    signal g_r, g_ylo : lane_t := (others => '0');
    signal g_m0 : unsigned(2 downto 0) := (others => '0');
    signal g_bofs : unsigned(BW_c + 2 downto 0) := (others => '0');
    signal g_left : u18_t := (others => '0');
    signal g_q1, g_q0 : u20_t := (others => '0');
    signal g_lo, g_hi, g_win0, g_win1 : keep_t := (others => '0');

    -- D0's registers, out to D1 as one record (d0).
    signal d0_first_reg : std_ulogic := '0';
    signal d0_en_reg : std_ulogic := '0';
    signal d0_place_reg : std_ulogic := '0';
    signal d0_early_reg : std_ulogic := '0';
    signal d0_conn_reg : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal d0_dest_reg : unsigned(ADDR_W - 1 downto 0) := (others => '0');
    signal d0_s_reg : unsigned(4 downto 0) := (others => '0');
    signal d0_remain_reg : unsigned(15 downto 0) := (others => '0');
    signal d0_rec_reg : rec_t := REC_ZERO_c;
    signal d0_rr_reg : std_ulogic_vector(223 downto 0) := (others => '0');
    signal d0_r_reg : unsigned(clog2(DATA_W / 8) - 1 downto 0) := (others => '0');
    signal d0_win0_reg : std_ulogic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
    signal d0_win1_reg : std_ulogic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
    signal d0_lo_reg : std_ulogic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
    signal d0_hi_reg : std_ulogic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
    signal d0_q0_reg : unsigned(19 downto 0) := (others => '0');
    signal d0_q1_reg : unsigned(19 downto 0) := (others => '0');
    signal d0_left_reg : unsigned(17 downto 0) := (others => '0');
    signal d0_waddr_reg : unsigned(ADDR_W - 1 downto 0) := (others => '0');
    signal d0_bofs_reg : unsigned(clog2(BURST) - 1 downto 0) := (others => '0');
    signal d0_wst_reg : std_ulogic := '0';

begin

    -- STag generations (ddp_rx_setup.v): each entry's at its last write,
    -- and a tagged ULPDU's at its first piece, for its connection.
    stgen_ram : entity work.sdp_ram
        generic map (WIDTH => GEN_W_c, ADDR_W => STAG_AW)
        port map (
            clk => clk,
            wr_en => cf_stag, wr_addr => s_stag_index, wr_data => sg_gen_reg,
            rd_en => '1', rd_addr => sg_rd_addr, rd_data => sg_rd_data
        );

    tgen_ram : entity work.sdp_ram
        generic map (WIDTH => GEN_W_c, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => tg_wr_reg, wr_addr => tg_conn_reg, wr_data => sg_rd_data,
            rd_en => dx_rd_en, rd_addr => dx_rd_addr, rd_data => tg_rd_data
        );

    -- A descriptor's fields (the set-up, SU_W_c bits, below the record).
    g_early <= dc_out.early;
    g_conn <= dc_out.conn;
    g_first <= dc_out.first;
    g_en <= dc_out.en;
    g_dplace <= dc_out.place;
    g_ddest <= dc_out.dest;
    g_ds <= dc_out.s;
    g_dremain <= dc_out.remain;
    g_drec <= dc_out.rec;
    g_dsu <= dc_out.su;

    pl_empty <= (not d0_valid_reg) and (not d1_active_reg) and (not d2_valid_reg) and (not d3_valid_reg)
                and (not d4_valid_reg) and (not g_fetch_reg) and not g_fetch2_reg;

    dc_out_ready <= dc_out_valid and (not g_fetch_reg) and (not g_fetch2_reg)
                    and sel(g_first, (not d0_valid_reg) or d0_take, pl_empty);

    -- A later piece waits for placement to be empty, then reads where its
    -- ULPDU's last piece ended (g_fetch, one clock) and works out its set-up
    -- from that (g_fetch2, one clock).
    p_g : process (all) is
        variable load, pfirst, pearly, pen, place : std_ulogic;
        variable pconn : conn_t;
        variable dest : addr_t;
        variable s : u5_t;
        variable remain : u16_t;
        variable rec : rec_t;
        variable rr : rr_t;
        variable su : su_t;
    begin
        load := '0';
        pconn := g_conn;
        pfirst := g_first;
        pearly := g_early;
        pen := g_en;
        place := g_dplace;
        dest := g_ddest;
        s := g_ds;
        remain := g_dremain;
        rec := g_drec;
        rr := (others => '0');
        su := g_dsu;
        dx_rd_en <= '0';
        dx_rd_addr <= g_conn;
        if g_fetch2_reg = '1' then
            -- A later piece: carry on where the last piece ended (and stop
            -- if a B error response of the stream comes in meanwhile, or at
            -- the cut: its STag entry was written since the first piece).
            load := '1';
            pconn := g_fconn_reg;
            pfirst := '0';
            pearly := '0';
            pen := g_fen_reg;
            place := gx_place_reg and not (herr_set and to_sl(herr_set_conn = g_fconn_reg)) and not g_cut;
            dest := gx_dest_reg;
            s := (others => '0');
            remain := gx_remain_reg;
            rec := gx_rec_reg;
            if g_cut = '1' then
                rec.kind := K_ERR_c;
                rec.err := ERR_DDP_INVALID_STAG;     -- DDP tagged: invalid STag
                rec.inv_stag(0) := '1';              -- the cut's mark (ddp_rx_setup.v)
            end if;
            rr := gx_rr_reg;
            su := gx_su_reg;
        elsif dc_out_ready = '1' and g_first = '1' then
            load := '1';
        elsif dc_out_ready = '1' then
            dx_rd_en <= '1';
        end if;
        g_load <= load;
        g_pconn <= pconn;
        g_pfirst <= pfirst;
        g_pearly <= pearly;
        g_pen <= pen;
        g_place <= place;
        g_dest <= dest;
        g_s <= s;
        g_remain <= remain;
        g_rec <= rec;
        g_rr <= rr;
        g_su <= su;
    end process p_g;

    -- D0: the piece's rotation R = (dest - S) mod N, its write window as
    -- lane masks of output beats 0 and 1 and the counts to the window's
    -- first and last beats, the first write address and the output beats to
    -- the end of the ULPDU's payload. The sums are pl_setup's, made ahead
    -- (C2 for a first piece, g_fetch for a later one); D0 turns them into
    -- masks and flags.
    p_setup : process (all) is
        variable m0z, m0p, m0o, m0g, m1z, m1n, m1o, m1l : std_ulogic;
        variable r, ylo : lane_t;
        variable m0 : unsigned(2 downto 0);
        variable q1 : u20_t;
        variable lo, hi : keep_t;
    begin
        r := unsigned(g_su(SU_W_c - 1 downto SU_W_c - LG_c));
        m0 := unsigned(g_su(SU_W_c - LG_c - 1 downto SU_W_c - LG_c - 3));
        ylo := unsigned(g_su(LG_c + 37 downto 38));
        g_left <= unsigned(g_su(37 downto 20));
        q1 := unsigned(g_su(19 downto 0));
        for b in 0 to KEEP_W_c - 1 loop
            lo(b) := to_sl(b >= to_integer(g_dest(LG_c - 1 downto 0)));
            hi(b) := to_sl(b <= to_integer(ylo));
        end loop;
        -- Beats 0 and 1 against the window: m0 = 0, > 0, = 1, > 1; m1 = q1
        -- + 2 = 0, < 0 (q1 = -3: no payload), = 1, < 1.
        m0z := to_sl(m0 = 0);
        m0p := to_sl(m0 /= 0);
        m0o := to_sl(m0 = 1);
        m0g := to_sl(m0 > 1);
        m1z := to_sl(q1 = x"ffffe");
        m1n := to_sl(q1 = x"ffffd");
        m1o := to_sl(q1 = x"fffff");
        m1l := m1z or m1n;
        g_r <= r;
        g_m0 <= m0;
        g_ylo <= ylo;
        g_q1 <= q1;
        g_lo <= lo;
        g_hi <= hi;
        g_win0 <= win_flags(m0z, m0p, m1z, m1n, lo, hi);
        g_win1 <= win_flags(m0o, m0g, m1o, m1l, lo, hi);
        g_q0 <= resize(m0, 20) - 2;
        g_bofs <= resize(g_dest(LG_c + BW_c - 1 downto LG_c), BW_c + 3) - resize(m0, BW_c + 3);
    end process p_setup;

    p_d0_reg : process (clk) is
        variable dx : dx_t;
    begin
        if rising_edge(clk) then
            if g_fetch2_reg = '1' then
                g_fetch2_reg <= '0';
            end if;
            if g_fetch_reg = '1' then
                g_fetch_reg <= '0';
                g_fetch2_reg <= '1';
                dx := dx_rd_data;
                gx_place_reg <= dx.place and g_fen_reg and not herr_reg(ci(g_fconn_reg))
                                and not (herr_set and to_sl(herr_set_conn = g_fconn_reg));
                gx_dest_reg <= dx.nxt;
                gx_remain_reg <= dx.remain;
                gx_rec_reg <= dx.rec;
                gx_rr_reg <= dx.rr;
                gx_tag_reg <= dx.rec.tagged;
                gx_gen_reg <= tg_rd_data;
                gx_su_reg <= pl_setup(dx.nxt(LG_c - 1 downto 0), (others => '0'), dx.remain);
            elsif dc_out_ready = '1' and g_first = '0' then
                g_fetch_reg <= '1';
                g_fconn_reg <= g_conn;
                g_fen_reg <= g_en;
            end if;
            if g_load = '1' then
                d0_valid_reg <= '1';
                d0_first_reg <= g_pfirst;
                d0_early_reg <= g_pearly;
                d0_en_reg <= g_pen;
                d0_place_q <= g_place;
                d0_cut_reg <= cut_reg(ci(g_conn));
                d0_cutf_reg <= cut_set and to_sl(cut_set_conn = g_conn);
                d0_conn_reg <= g_pconn;
                d0_dest_reg <= g_dest;
                d0_s_reg <= g_s;
                d0_remain_reg <= g_remain;
                d0_rec_reg <= g_rec;
                d0_rr_reg <= g_rr;
                d0_r_reg <= g_r;
                d0_win0_reg <= g_win0;
                d0_win1_reg <= g_win1;
                d0_q0_reg <= g_q0;
                d0_q1_reg <= g_q1;
                d0_lo_reg <= g_lo;
                d0_hi_reg <= g_hi;
                -- The first written output beat, m0, is at dest rounded down
                -- to N; output beat k at (dest / N - m0 + k) N. D1 counts the
                -- address from m0 on (wst), and its place in the burst block
                -- from 0.
                d0_waddr_reg <= g_dest and not to_unsigned(KEEP_W_c - 1, ADDR_W);
                d0_bofs_reg <= g_bofs(BW_c - 1 downto 0);
                d0_wst_reg <= to_sl(g_m0 = 0);
                d0_left_reg <= g_left;
            elsif d0_take = '1' then
                d0_valid_reg <= '0';
            end if;
            if rst = '1' then
                g_fetch_reg <= '0';
                g_fetch2_reg <= '0';
                d0_valid_reg <= '0';
            end if;
        end if;
    end process p_d0_reg;

    -- STag generations (ddp_rx_setup.v): the entry's count now against the
    -- ULPDU's at its first piece; the cut connection's bit.
    sg_rd_addr <= dx_rd_data.rec.stag(8 + STAG_AW - 1 downto 8) when g_fetch_reg = '1'
                  else g_drec.stag(8 + STAG_AW - 1 downto 8);
    g_cut <= gx_place_reg and gx_tag_reg and to_sl(sg_rd_data /= gx_gen_reg);
    d0_place_reg <= d0_place_q and not (d0_first_reg and (d0_cut_reg or d0_cutf_reg));

    p_gen_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if cf_stag = '1' then
                sg_gen_reg <= std_ulogic_vector(unsigned(sg_gen_reg) + 1);
            end if;
            tg_wr_reg <= (not g_fetch2_reg) and dc_out_ready and g_first and not g_early;
            tg_conn_reg <= g_conn;
            cut_set <= g_fetch2_reg and g_cut;
            cut_set_conn <= g_fconn_reg;
            if cut_set = '1' then
                cut_reg(ci(cut_set_conn)) <= '1';
            end if;
            if cf_conn = '1' then
                cut_reg(ci(s_conn_conn)) <= '0';
            end if;
            if rst = '1' then
                sg_gen_reg <= (others => '0');
                tg_wr_reg <= '0';
                cut_set <= '0';
                cut_reg <= (others => '0');
            end if;
        end if;
    end process p_gen_reg;

    d0 <= (
          first => d0_first_reg,
          en => d0_en_reg,
          place => d0_place_reg,
          early => d0_early_reg,
          conn => d0_conn_reg,
          dest => d0_dest_reg,
          s => d0_s_reg,
          remain => d0_remain_reg,
          rec => d0_rec_reg,
          rr => d0_rr_reg,
          r => d0_r_reg,
          win0 => d0_win0_reg,
          win1 => d0_win1_reg,
          lo => d0_lo_reg,
          hi => d0_hi_reg,
          q0 => d0_q0_reg,
          q1 => d0_q1_reg,
          left => d0_left_reg,
          waddr => d0_waddr_reg,
          bofs => d0_bofs_reg,
          wst => d0_wst_reg
    );

end architecture rtl;
