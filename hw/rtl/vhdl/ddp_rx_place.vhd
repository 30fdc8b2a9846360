-- ddp_rx_place: stage D1 of ddp_rx's placement, with D2 to D4 behind it
-- in ddp_rx_retire (instantiated here).
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_place.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_place is
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
        df_out : in df_r(data(DATA_W - 1 downto 0), keep(DATA_W / 8 - 1 downto 0));
        df_out_valid : in std_ulogic;
        aw_in_ready : in std_ulogic;
        w_in_ready : in std_ulogic;
        w_in_ready2 : in std_ulogic;
        rf_in_ready : in std_ulogic;
        bq_in_ready : in std_ulogic;
        d0_valid_reg : in std_ulogic;
        d0 : in d0_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                 r(clog2(DATA_W / 8) - 1 downto 0), win0(DATA_W / 8 - 1 downto 0), win1(DATA_W / 8 - 1 downto 0),
                 lo(DATA_W / 8 - 1 downto 0), hi(DATA_W / 8 - 1 downto 0), waddr(ADDR_W - 1 downto 0),
                 bofs(clog2(BURST) - 1 downto 0));
        df_out_ready : out std_ulogic := '0';
        aw_in_valid : out std_ulogic := '0';
        aw_in_data : out std_ulogic_vector(ADDR_W + 8 - 1 downto 0) := (others => '0');
        w_in_valid : out std_ulogic := '0';
        w_in_data : out std_ulogic_vector(DATA_W + DATA_W / 8 + 1 - 1 downto 0) := (others => '0');
        w2_in_valid : out std_ulogic := '0';
        w2_in_data : out std_ulogic_vector(DATA_W + DATA_W / 8 + 1 - 1 downto 0) := (others => '0');
        w_in_half : out std_ulogic := '0';
        w2_in_half : out std_ulogic := '0';
        d_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        d1_active_reg : out std_ulogic := '0';
        d2_valid_reg : out std_ulogic := '0';
        d3_valid_reg : out std_ulogic := '0';
        d4_valid_reg : out std_ulogic := '0';
        d0_take : out std_ulogic := '0';
        e2_last_reg : out std_ulogic := '0';
        e2_en_reg : out std_ulogic := '0';
        e2_early_reg : out std_ulogic := '0';
        e2_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        e2_rec_reg : out rec_r(id(ID_W - 1 downto 0)) := rec_zero(ID_W);
        e2_rr_reg : out std_ulogic_vector(223 downto 0) := (others => '0');
        e4_place_reg : out std_ulogic := '0';
        e4_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        e4_rec_reg : out rec_r(id(ID_W - 1 downto 0)) := rec_zero(ID_W);
        e4_rr_reg : out std_ulogic_vector(223 downto 0) := (others => '0');
        e4_nxt : out unsigned(ADDR_W - 1 downto 0) := (others => '0');
        e4_left : out unsigned(15 downto 0) := (others => '0')
    );
end entity ddp_rx_place;

architecture rtl of ddp_rx_place is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);

    signal d2_free : std_ulogic := '0';
    -- D1.
    signal d_state_reg : u2_t := D_DATA_c;
    signal d_first_reg, d_en_reg, d_place_reg, d_last_reg, d_early_reg : std_ulogic := '0';
    signal d_dest_reg : addr_t := (others => '0');
    signal d_s_reg : u5_t := (others => '0');
    signal d_remain_reg : u16_t := (others => '0');
    signal d_rec_reg : rec_t := REC_ZERO_c;
    signal d_rr_reg : rr_t := (others => '0');
    signal d_r_reg : lane_t := (others => '0');
    signal d_win_reg, d_winn_reg, d_lo_reg, d_hi_reg : keep_t := (others => '0');
    signal d_wne_reg, d_wnen_reg : std_ulogic := '0';     -- the masks are not empty
    signal d_q0_reg, d_q1_reg : u20_t := (others => '0');   -- window ends minus (output beat + 2)
    signal d_waddr_reg : addr_t := (others => '0');
    signal d_wst_reg : std_ulogic := '0';                 -- the output beat is the window's first (m0) or later
    signal d_bofs_reg : bofs_t := (others => '0');        -- output beat's place in its BURST block
    signal d_left_reg : u18_t := (others => '0');         -- output beats to the end of the ULPDU's payload
    signal d_bleft_reg : bofs_t := (others => '0');       -- beats left in the open burst (< BURST)
    signal d_k_reg : u13_t := (others => '0');            -- input beat index (8192 at W=64)
    signal d_prev_reg : data_t := (others => '0');
    signal d_prevk_reg : keep_t := (others => '0');
    signal d_octs_reg : u17_t := (others => '0');         -- octets of the piece
    signal d_cur_data : data_t := (others => '0');
    signal d_cur_keep : keep_t := (others => '0');
    signal d_cur_tlast, d_cur_ulast, out_ok : std_ulogic := '0';
    signal ob_data, fl_data : data_t := (others => '0');
    signal ob_strb, fl_strb : keep_t := (others => '0');
    -- left = 0, 1, 2 and bleft = 0, 1, 2 are registers of their own, kept
    -- with the counts.
    signal f_left0 : std_ulogic := '1';
    signal f_left1, f_left2 : std_ulogic := '0';
    signal f_bl0 : std_ulogic := '1';
    signal f_bl1, f_bl2 : std_ulogic := '0';
    signal f_left3, f_left4, f_bl3 : std_ulogic := '0';
    signal f_nb : bofs_t := (others => '0');
    signal f_bend, f_bend1, f_lge : std_ulogic := '0';
    signal f_llo, f_llom1 : unsigned(BW_c downto 0) := (others => '0');
    signal f_nbm1 : u8_t := (others => '0');
    signal f_nbm1_0, f_nbm1_1, f_nbm1_2 : std_ulogic := '0';
    -- The counters' steps, from their registers alone.
    signal d_leftm1, d_leftm2 : u18_t := (others => '0');
    signal d_leftm2h : u17_t := (others => '0');
    signal d_k1 : u13_t := (others => '0');
    signal d_q0m1, d_q1m1 : u20_t := (others => '0');
    signal d_wan : unsigned(ADDR_W - LG_c - 1 downto 0) := (others => '0');
    signal d_waddr_n : addr_t := (others => '0');
    signal d_prime : std_ulogic := '0';
    signal d0_q0m1, d0_q1m1 : u20_t := (others => '0');
    signal d0_wan : unsigned(ADDR_W - LG_c - 1 downto 0) := (others => '0');
    signal d0_win2 : keep_t := (others => '0');
    signal d_beat, d_wr, d_end, d_aw, d_go : std_ulogic := '0';
    signal d_wrx, d_lft_n0x, d_bl_n0x, d_bl_n1x : std_ulogic := '0';
    signal d_t_end1, d_t_w2, d_t_w2b, d_t_fl : std_ulogic := '0';
    signal d_state_next : u2_t := (others => '0');
    signal d_rr_next : rr_t := (others => '0');
    signal d_octs : u17_t := (others => '0');
    signal d_nw : u2_t := (others => '0');
    -- D1's piece end, to D2 (ddp_rx_retire).
    signal pe : pe_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)))
        := (last => '0', en => '0', early => '0', place => '0', conn => (others => '0'), dest => (others => '0'),
            s => (others => '0'), octs => (others => '0'), remain => (others => '0'), rec => REC_ZERO_c,
            rr => (others => '0'));

    -- D0's registers (ddp_rx_setup), by their names there.
    alias d0_first_reg is d0.first;
    alias d0_en_reg is d0.en;
    alias d0_place_reg is d0.place;
    alias d0_early_reg is d0.early;
    alias d0_conn_reg is d0.conn;
    alias d0_dest_reg is d0.dest;
    alias d0_s_reg is d0.s;
    alias d0_remain_reg is d0.remain;
    alias d0_rec_reg is d0.rec;
    alias d0_rr_reg is d0.rr;
    alias d0_r_reg is d0.r;
    alias d0_win0_reg is d0.win0;
    alias d0_win1_reg is d0.win1;
    alias d0_lo_reg is d0.lo;
    alias d0_hi_reg is d0.hi;
    alias d0_q0_reg is d0.q0;
    alias d0_q1_reg is d0.q1;
    alias d0_left_reg is d0.left;
    alias d0_waddr_reg is d0.waddr;
    alias d0_bofs_reg is d0.bofs;
    alias d0_wst_reg is d0.wst;

begin

    -- D1: the piece being placed.
    d_cur_data <= df_out.data;
    d_cur_keep <= df_out.keep;
    d_cur_tlast <= df_out.tlast;
    d_cur_ulast <= df_out.ulast;
    out_ok <= aw_in_ready and w_in_ready and bq_in_ready;

    -- Output beat: lanes at or above the rotation from the current beat,
    -- below it from the previous one, each rotated up by R lanes.
    p_ob : process (all) is
        variable flush : std_ulogic;
        variable rdc, rdp : data_t;
        variable rkc, rkp : keep_t;
        variable hi_lanes : keep_t;
        variable keep : keep_t;
        variable r : natural;
    begin
        flush := to_sl(d_state_reg /= D_DATA_c);
        r := to_integer(d_r_reg);
        rdc := std_ulogic_vector(rotate_left(unsigned(d_cur_data), 8 * r));
        rkc := std_ulogic_vector(rotate_left(unsigned(d_cur_keep), r));
        rdp := std_ulogic_vector(rotate_left(unsigned(d_prev_reg), 8 * r));
        rkp := std_ulogic_vector(rotate_left(unsigned(d_prevk_reg), r));
        for b in 0 to KEEP_W_c - 1 loop
            hi_lanes(b) := to_sl(b >= r);
        end loop;
        -- (A flush beat has no current input beat: its lanes are zero.)
        ob_data <= (rdc and expand(hi_lanes and (KEEP_W_c - 1 downto 0 => not flush)))
                   or (rdp and expand(not hi_lanes));
        if flush = '1' then
            keep := (rkp and not hi_lanes);
        else
            keep := (rkc and hi_lanes) or (rkp and not hi_lanes);
        end if;
        ob_strb <= keep and d_win_reg and (KEEP_W_c - 1 downto 0 => d_place_reg);
        -- The flush beat of the current input beat (the next output beat: its
        -- lanes below the rotation), for a piece's tlast beat.
        fl_data <= rdc and expand(not hi_lanes);
        fl_strb <= rkc and (not hi_lanes) and d_winn_reg and (KEEP_W_c - 1 downto 0 => d_place_reg);
    end process p_ob;

    -- Flags of the counts, from registers. A new burst (at an output beat
    -- with no burst open) runs to the end of its BURST block or to the end
    -- of the ULPDU's payload: nbm1 = min(left - 1, BURST - 1 - bofs) beats
    -- after its first. (left - 1 >= BURST - 1 - bofs, the wrapped left - 1
    -- of left = 0 included, is worked out on left's low BW + 1 bits: any
    -- higher bit set makes left >= 2 BURST.)
    f_left3 <= to_sl(d_left_reg = 3);
    f_left4 <= to_sl(d_left_reg = 4);
    f_bl3 <= to_sl(d_bleft_reg = 3);
    f_nb <= not d_bofs_reg;                                   -- BURST - 1 - bofs
    f_bend <= to_sl(d_bofs_reg = (BW_c - 1 downto 0 => '1'));  -- last beat of a block
    f_bend1 <= to_sl(d_bofs_reg = BEND1_c);
    f_llo <= d_left_reg(BW_c downto 0);
    f_llom1 <= d_left_reg(BW_c downto 0) - 1;
    f_lge <= to_sl(d_left_reg(17 downto BW_c + 1) /= 0 or f_llo = 0 or f_llom1 >= resize(f_nb, BW_c + 1));
    f_nbm1 <= resize(f_nb, 8) when f_lge = '1' else resize(f_llom1(BW_c - 1 downto 0), 8);
    f_nbm1_0 <= f_left1 or f_bend;
    f_nbm1_1 <= (f_left2 and not f_bend) or (f_bend1 and not f_left0 and not f_left1);
    f_nbm1_2 <= to_sl(f_nbm1 = 2);

    -- The counters' steps, from their registers alone, so that the control
    -- only picks them (the Verilog's rnic_incdec: here inc64, dec64,
    -- on the zero-extended counter, low bits taken).
    d_leftm1 <= resize(dec64(resize(d_left_reg, 64)), 18);
    d_leftm2h <= resize(dec64(resize(d_left_reg(17 downto 1), 64)), 17);
    d_leftm2 <= d_leftm2h & d_left_reg(0);
    d_k1 <= resize(inc64(resize(d_k_reg, 64)), 13);
    d_q0m1 <= resize(dec64(resize(d_q0_reg, 64)), 20);
    d_q1m1 <= resize(dec64(resize(d_q1_reg, 64)), 20);
    d_wan <= resize(inc64(resize(d_waddr_reg(ADDR_W - 1 downto LG_c), 64)), ADDR_W - LG_c);
    -- The next output beat's address: waddr + N from the window's first
    -- beat on (d_wst), before it the first beat's address.
    d_waddr_n <= d_wan & (LG_c - 1 downto 0 => '0') when d_wst_reg = '1' else d_waddr_reg;

    d0_take <= d0_valid_reg and ((not d1_active_reg) or d_end);
    -- A piece that D1 takes while idle whose first input beat writes
    -- nothing (its output beat is outside the write window: the payload's
    -- first output beat needs the next input beat too) takes that beat at
    -- the load (d_prime): D1 starts as it would be a clock later, after a
    -- beat that only fills d_prev. Not for a tlast beat, nor behind a piece
    -- still in D1 (its beat at df_out would be that piece's).
    d_prime <= d0_valid_reg and not d1_active_reg and df_out_valid and not d_cur_tlast
               and not (or d0_win0_reg);
    df_out_ready <= d_beat or d_prime;
    -- D1's step over that beat, from D0's registers.
    d0_q0m1 <= resize(dec64(resize(d0_q0_reg, 64)), 20);
    d0_q1m1 <= resize(dec64(resize(d0_q1_reg, 64)), 20);
    d0_wan <= resize(inc64(resize(d0_waddr_reg(ADDR_W - 1 downto LG_c), 64)), ADDR_W - LG_c);
    d0_win2 <= win_mask(d0_q0_reg, d0_q1_reg, d0_lo_reg, d0_hi_reg);

    w2_in_data <= fl_data & fl_strb & '1';
    w2_in_half <= d_waddr_n(LG_c);

    -- What a data or flush beat would do, from registers alone (the
    -- handshakes only AND it in): it writes (wrx; a pad beat never does),
    -- and then left is 0 (lft_n0x), bleft is 0 or 1 (bl_n0x, bl_n1x). A
    -- ULPDU's last input beat, when taken, ends the piece with nothing more
    -- to write (t_end1), with a flush beat behind its own in the same clock
    -- (t_w2), or with a flush beat alone (t_fl); otherwise a flush beat
    -- follows. (The Verilog keeps the three as nets of their own.)
    d_wrx <= d_place_reg and d_wne_reg;
    d_lft_n0x <= sel(d_wrx, f_left1, f_left0);
    d_bl_n0x <= sel(d_wrx, sel(f_bl0, f_nbm1_0, f_bl1), f_bl0);
    d_bl_n1x <= sel(d_wrx, sel(f_bl0, f_nbm1_1, f_bl2), f_bl1);
    d_t_end1 <= d_cur_ulast and ((not d_place_reg) or d_lft_n0x);
    d_t_w2 <= d_cur_ulast and (not d_t_end1) and d_wrx and w_in_ready2 and d_bl_n1x;
    d_t_w2b <= d_cur_ulast and (not d_t_end1) and d_wrx and w_in_ready2
               and (f_bl1 or (to_sl(WR_REQ /= 0) and f_bl0 and f_bend));
    d_t_fl <= d_cur_ulast and (not d_t_end1) and (not d_wrx) and f_bl0 and f_left1;

    p_d1 : process (all) is
        variable beat, wr, en, aw, go : std_ulogic;
        variable st_next : u2_t;
        variable octs : u17_t;
        variable kc : unsigned(LG_c downto 0);
        variable rrn : rr_t;
        variable awv, wv, w2v, wh : std_ulogic;
        variable awd : aww_t;
        variable wd : ww_t;
    begin
        st_next := d_state_reg;
        octs := d_octs_reg;
        rrn := d_rr_reg;
        awv := '0';
        awd := std_ulogic_vector(d_waddr_reg) & std_ulogic_vector(f_nbm1);
        wv := '0';
        wd := ob_data & ob_strb & sel(f_bl0, f_nbm1_0, f_bl1);
        wh := d_waddr_reg(LG_c);
        w2v := '0';
        en := '0';
        -- A piece's end waits for D2 (d2_free): the tlast beat, a flush beat
        -- and the last pad beat.
        case d_state_reg is
            when D_DATA_c =>
                go := d1_active_reg and out_ok and df_out_valid and ((not d_cur_tlast) or d2_free);
            when D_FLUSH_c =>
                go := d1_active_reg and out_ok and d2_free;
            when others =>
                go := d1_active_reg and out_ok and ((not f_bl1) or d2_free);
        end case;
        beat := go and to_sl(d_state_reg = D_DATA_c);
        wr := go and to_sl(d_state_reg /= D_PAD_c) and d_wrx;
        aw := wr and f_bl0;
        if wr = '1' then
            wv := '1';
            awv := aw;
        end if;
        if beat = '1' and d_first_reg = '1' then
            rrn := rr_capture(d_rr_reg, d_cur_data, d_k_reg);
        end if;
        if beat = '1' and d_cur_tlast = '1' then
            -- k N + the beat's octets, N of them or fewer (no carry chain)
            kc := keep_count(d_cur_keep);
            if kc(LG_c) = '1' then
                octs := shift_left(resize(d_k1, 17), LG_c);
            else
                octs := shift_left(resize(d_k_reg, 17), LG_c) or resize(kc(LG_c - 1 downto 0), 17);
            end if;
        end if;
        case d_state_reg is
            when D_DATA_c =>
                if beat = '1' and d_cur_tlast = '1' then
                    -- A flush beat follows when the last input beat leaves
                    -- octets of the payload for the next output beat (see the
                    -- Verilog): in this clock behind this beat's, alone as a
                    -- burst of one, or in state D_FLUSH.
                    if d_t_end1 = '1' then
                        en := '1';
                    elsif d_t_w2 = '1' then
                        w2v := '1';
                        en := '1';
                    elsif d_t_w2b = '1' then
                        -- this beat's burst ends at a BURST block's end: the
                        -- flush beat is a burst of one of its own
                        -- (with the write-request stream: a continuation of
                        -- this beat, without an AW; see the Verilog)
                        w2v := '1';
                        if WR_REQ = 0 then
                            awv := '1';
                            awd := std_ulogic_vector(d_waddr_n) & x"00";
                        end if;
                        en := '1';
                    elsif d_t_fl = '1' then
                        wv := '1';
                        wd := fl_data & fl_strb & '1';
                        wh := d_waddr_n(LG_c);
                        awv := '1';
                        awd := std_ulogic_vector(d_waddr_n) & x"00";
                        en := '1';
                    else
                        st_next := D_FLUSH_c;
                    end if;
                end if;
            when D_FLUSH_c =>
                if go = '1' then
                    if d_bl_n0x = '1' then
                        en := '1';
                    else
                        st_next := D_PAD_c;
                    end if;
                end if;
            when others =>
                -- The piece ended inside a burst: the rest of it, no strobes.
                if go = '1' then
                    wv := '1';
                    wd := (W_W_c - 1 downto 1 => '0') & f_bl1;
                    if f_bl1 = '1' then
                        en := '1';
                    end if;
                end if;
        end case;
        if en = '1' then
            st_next := D_DATA_c;
        end if;
        d_beat <= beat;
        d_wr <= wr;
        d_end <= en;
        d_aw <= aw;
        d_go <= go;
        d_state_next <= st_next;
        d_octs <= octs;
        d_rr_next <= rrn;
        aw_in_valid <= awv;
        aw_in_data <= awd;
        w_in_valid <= wv;
        w_in_data <= wd;
        w_in_half <= wh;
        w2_in_valid <= w2v;
        -- Output beats (W beats pushed, from the data path: not the pad beats).
        d_nw <= ("0" & wr) + ("0" & w2v) + ("0" & (not wr and wv and to_sl(d_state_reg = D_DATA_c)));
    end process p_d1;

    p_d1_reg : process (clk) is
        variable wm : keep_t;
    begin
        if rising_edge(clk) then
            if d0_take = '1' then
                d1_active_reg <= '1';
                d_state_reg <= D_DATA_c;
                d_conn_reg <= d0_conn_reg;
                d_first_reg <= d0_first_reg;
                d_early_reg <= d0_early_reg;
                d_en_reg <= d0_en_reg;
                d_place_reg <= d0_place_reg;
                d_dest_reg <= d0_dest_reg;
                d_s_reg <= d0_s_reg;
                d_remain_reg <= d0_remain_reg;
                d_rec_reg <= d0_rec_reg;
                d_r_reg <= d0_r_reg;
                d_lo_reg <= d0_lo_reg;
                d_hi_reg <= d0_hi_reg;
                if d_prime = '1' then
                    -- (as a D1 beat that writes nothing: see there)
                    if d0_first_reg = '1' then
                        d_rr_reg <= rr_capture(d0_rr_reg, d_cur_data, (others => '0'));
                    else
                        d_rr_reg <= d0_rr_reg;
                    end if;
                    d_win_reg <= d0_win1_reg;
                    d_winn_reg <= d0_win2;
                    d_wne_reg <= or d0_win1_reg;
                    d_wnen_reg <= or d0_win2;
                    d_q0_reg <= d0_q0m1;
                    d_q1_reg <= d0_q1m1;
                    if d0_wst_reg = '1' then
                        d_waddr_reg <= d0_wan & (LG_c - 1 downto 0 => '0');
                    else
                        d_waddr_reg <= d0_waddr_reg;
                    end if;
                    d_bofs_reg <= d0_bofs_reg + 1;
                    d_wst_reg <= d0_q0_reg(19);
                    d_k_reg <= to_unsigned(1, d_k_reg'length);
                    d_prev_reg <= d_cur_data;
                    d_prevk_reg <= d_cur_keep;
                else
                    d_rr_reg <= d0_rr_reg;
                    d_win_reg <= d0_win0_reg;
                    d_winn_reg <= d0_win1_reg;
                    d_wne_reg <= or d0_win0_reg;
                    d_wnen_reg <= or d0_win1_reg;
                    d_q0_reg <= d0_q0_reg;
                    d_q1_reg <= d0_q1_reg;
                    d_waddr_reg <= d0_waddr_reg;
                    d_bofs_reg <= d0_bofs_reg;
                    d_wst_reg <= d0_wst_reg;
                    d_k_reg <= (others => '0');
                    d_prev_reg <= (others => '0');
                    d_prevk_reg <= (others => '0');
                end if;
                d_left_reg <= d0_left_reg;
                f_left0 <= to_sl(d0_left_reg = 0);
                f_left1 <= to_sl(d0_left_reg = 1);
                f_left2 <= to_sl(d0_left_reg = 2);
                d_bleft_reg <= (others => '0');
                f_bl0 <= '1';
                f_bl1 <= '0';
                f_bl2 <= '0';
            else
                if d_end = '1' then
                    d1_active_reg <= '0';
                end if;
                d_state_reg <= d_state_next;
                d_rr_reg <= d_rr_next;
                if d_go = '1' then
                    if d_state_reg = D_PAD_c or (d_wr = '1' and d_aw = '0') then
                        d_bleft_reg <= d_bleft_reg - 1;
                        f_bl0 <= f_bl1;
                        f_bl1 <= f_bl2;
                        f_bl2 <= f_bl3;
                    elsif d_wr = '1' then
                        d_bleft_reg <= f_nbm1(BW_c - 1 downto 0);
                        f_bl0 <= f_nbm1_0;
                        f_bl1 <= f_nbm1_1;
                        f_bl2 <= f_nbm1_2;
                    end if;
                end if;
                -- left - d_nw: both differences worked out from the register,
                -- one picked by d_nw.
                if d_nw = 1 then
                    d_left_reg <= d_leftm1;
                    f_left0 <= f_left1;
                    f_left1 <= f_left2;
                    f_left2 <= f_left3;
                elsif d_nw = 2 then
                    d_left_reg <= d_leftm2;
                    f_left0 <= f_left2;
                    f_left1 <= f_left3;
                    f_left2 <= f_left4;
                end if;
                if d_beat = '1' then
                    d_prev_reg <= d_cur_data;
                    d_prevk_reg <= d_cur_keep;
                    d_k_reg <= d_k1;
                    d_waddr_reg <= d_waddr_n;
                    d_wst_reg <= d_q0_reg(19);
                    d_bofs_reg <= d_bofs_reg + 1;
                    d_win_reg <= d_winn_reg;
                    d_wne_reg <= d_wnen_reg;
                    wm := win_mask(d_q0_reg, d_q1_reg, d_lo_reg, d_hi_reg);
                    d_winn_reg <= wm;
                    d_wnen_reg <= or wm;
                    d_q0_reg <= d_q0m1;
                    d_q1_reg <= d_q1m1;
                end if;
            end if;
            if d_beat = '1' and d_cur_tlast = '1' then
                d_last_reg <= d_cur_ulast;
                d_octs_reg <= d_octs;
            end if;
            if rst = '1' then
                d1_active_reg <= '0';
                d_state_reg <= D_DATA_c;
                d_bleft_reg <= (others => '0');
                f_bl0 <= '1';
                f_bl1 <= '0';
                f_bl2 <= '0';
            end if;
        end if;
    end process p_d1_reg;

    -- D2..D4, the piece's end: ddp_rx_retire.vhd.
    p_pe : process (all) is
    begin
        if d_state_reg = D_DATA_c then
            pe.last <= d_cur_ulast;
        else
            pe.last <= d_last_reg;
        end if;
        pe.en <= d_en_reg;
        pe.early <= d_early_reg;
        pe.place <= d_place_reg;
        pe.conn <= d_conn_reg;
        pe.dest <= d_dest_reg;
        pe.s <= d_s_reg;
        pe.octs <= d_octs;
        pe.remain <= d_remain_reg;
        pe.rec <= d_rec_reg;
        pe.rr <= d_rr_next;
    end process p_pe;

    u_retire : entity work.ddp_rx_retire
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ)
        port map (
            clk => clk, rst => rst,
            rf_in_ready => rf_in_ready, d_end_w => d_end, pe => pe,
            d2_free => d2_free, d2_valid_reg => d2_valid_reg, d3_valid_reg => d3_valid_reg, d4_valid_reg => d4_valid_reg,
            e2_last_reg => e2_last_reg, e2_en_reg => e2_en_reg, e2_early_reg => e2_early_reg,
            e2_conn_reg => e2_conn_reg, e2_rec_reg => e2_rec_reg, e2_rr_reg => e2_rr_reg,
            e4_place_reg => e4_place_reg, e4_conn_reg => e4_conn_reg, e4_rec_reg => e4_rec_reg,
            e4_rr_reg => e4_rr_reg, e4_nxt => e4_nxt, e4_left => e4_left
        );

end architecture rtl;
