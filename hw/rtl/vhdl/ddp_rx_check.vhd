-- ddp_rx_check: stages H, C1 and C1b of ddp_rx's check pipeline.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_check.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_check is
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
        cx_rd_data : in cx_r(qs(3 * (32 + RQ_AW + 1) - 1 downto 0));
        st_rd_data : in std_logic_vector(st_w(CONN_W, ADDR_W) - 1 downto 0);
        rg_rd_data : in std_logic_vector(rg_w(ADDR_W, ID_W) - 1 downto 0);
        h_valid : in std_ulogic;
        h_rec : in hf_r(conn(CONN_W - 1 downto 0));
        dc_in_ready : in std_ulogic;
        c_adv : out std_ulogic := '0';
        hf_conn : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        hf_hdr : out std_ulogic_vector(143 downto 0) := (others => '0');
        hf_idx32 : out unsigned(31 downto 0) := (others => '0');
        c1_valid_reg : out std_ulogic := '0';
        p1_conn : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        b_valid_reg : out std_ulogic := '0';
        c1b : out c1b_r(conn(CONN_W - 1 downto 0), cx(qs(3 * (32 + RQ_AW + 1) - 1 downto 0)), id(ID_W - 1 downto 0),
                   st(st_w(CONN_W, ADDR_W) - 2 downto 0)) := c1b_zero(CONN_W, RQ_AW, ID_W, st_w(CONN_W, ADDR_W) - 1)
    );
end entity ddp_rx_check;

architecture rtl of ddp_rx_check is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype cx_t is cx_r(qs(3 * Q_W_c - 1 downto 0));
    subtype hf_t is hf_r(conn(CONN_W - 1 downto 0));
    constant HF_ZERO_c : hf_t := hf_zero(CONN_W);
    constant CX_ZERO_c : cx_t := cx_zero(RQ_AW);

    signal c1_rec_reg : hf_t := HF_ZERO_c;
    signal p1_drop, p1_early, p1_short, p1_first : std_ulogic := '0';
    signal p1_n : u16_t := (others => '0');
    -- C1 results.
    signal h_t, h_l : std_ulogic := '0';
    signal h_op : u4_t := (others => '0');
    signal h_stag, h_qn, h_msn : u32_t := (others => '0');
    signal h_hlen : u5_t := (others => '0');
    signal h_cerr : std_ulogic := '0';
    signal h_cerr_code : w16_t := (others => '0');
    signal h_cnt : qcnt_t := (others => '0');
    signal h_n : u16_t := (others => '0');
    signal st_acc0 : std_ulogic := '0';
    signal rg_id : id_t := (others => '0');
    signal a_lt, a_gt, a_dt, a_du, a_mon, a_long : u162_t := (others => '0');
    signal a_wrap, a_mo_gt, a_rr_eq, c1_stag_bad, c1_assoc_bad : std_ulogic := '0';
    signal a_msn1 : u33_t := (others => '0');
    signal a_sg : sg4_t := (others => '0');           -- d_j's sign, first clock
    signal a_uz, a_z : std_ulogic_vector(3 downto 0) := (others => '0');   -- d_j's bits LQ..31 zero, d_j zero
    signal a_low : low4_t := (others => '0');         -- d_j's bits 0..LQ-1
    signal a_cm : cm4_t := (others => '0');           -- count - j: the window's size
    signal b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a : u162_t := (others => '0');
    signal b_sg_a : sg4_t := (others => '0');
    signal b_uz_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal b_low_reg : low4_t := (others => '0');
    signal b_cm_reg : cm4_t := (others => '0');

    -- C1b's registers and sums, out to C2 as one record (c1b).
    signal b_conn_reg : std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
    signal b_first_reg : std_ulogic := '0';
    signal b_early_reg : std_ulogic := '0';
    signal b_cx_reg : cx_t := CX_ZERO_c;
    signal b_t_reg : std_ulogic := '0';
    signal b_l_reg : std_ulogic := '0';
    signal b_op_reg : unsigned(3 downto 0) := (others => '0');
    signal b_stag_reg : unsigned(31 downto 0) := (others => '0');
    signal b_msn_reg : unsigned(31 downto 0) := (others => '0');
    signal b_msn1_reg : unsigned(31 downto 0) := (others => '0');
    signal b_qn_reg : unsigned(1 downto 0) := (others => '0');
    signal b_n_reg : unsigned(15 downto 0) := (others => '0');
    signal b_hlen_reg : unsigned(4 downto 0) := (others => '0');
    signal b_cerr_reg : std_ulogic := '0';
    signal b_cerr_code_reg : std_ulogic_vector(15 downto 0) := (others => '0');
    signal b_stag_bad_reg : std_ulogic := '0';
    signal b_assoc_bad_reg : std_ulogic := '0';
    signal b_acc_reg : std_ulogic := '0';
    signal b_wrap_reg : std_ulogic := '0';
    signal b_mo_gt_reg : std_ulogic := '0';
    signal b_rr_eq_reg : std_ulogic := '0';
    signal b_z_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal b_id_reg : std_ulogic_vector(ID_W - 1 downto 0) := (others => '0');
    signal b_st_reg : std_ulogic_vector(st_w(CONN_W, ADDR_W) - 2 downto 0) := (others => '0');
    signal bs_lt : u73_t := (others => '0');
    signal bs_gt : u73_t := (others => '0');
    signal bs_dt : u73_t := (others => '0');
    signal bs_du : u73_t := (others => '0');
    signal bs_mon : u73_t := (others => '0');
    signal bs_long : u73_t := (others => '0');
    signal bs_nobuf : std_ulogic_vector(3 downto 0) := (others => '0');
    signal bs_behind : std_ulogic_vector(3 downto 0) := (others => '0');

begin

    c_adv <= dc_in_ready;

    hf_conn <= h_rec.conn;
    hf_hdr <= h_rec.hdr;
    hf_idx32 <= be32(hf_hdr, 2);

    p_c1_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                c1_valid_reg <= h_valid;
                c1_rec_reg <= h_rec;
            end if;
            if rst = '1' then
                c1_valid_reg <= '0';
            end if;
        end if;
    end process p_c1_reg;

    -- C1: the header's fields, the context and the table entries.
    p1_drop <= c1_rec_reg.drop;
    p1_early <= c1_rec_reg.early;
    p1_short <= c1_rec_reg.short;
    p1_n <= c1_rec_reg.n;
    p1_conn <= c1_rec_reg.conn;
    p1_first <= c1_rec_reg.first;

    p_c1 : process (all) is
        variable hdr : hdr_t;
        variable t : std_ulogic;
        variable dv, rv, opqn : u2_t;
        variable op : u4_t;
        variable stag, qn, msn, mo : u32_t;
        variable to64 : u64_t;
        variable optag : std_ulogic;
        variable n : u16_t;
        variable q : q_t;
        variable first : u32_t;
        variable cx : cx_t;
        variable st : st_t;
        variable rg : rg_t;
        variable st_valid, st_bound : std_ulogic;
        variable st_key : std_ulogic_vector(7 downto 0);
        variable st_pd : w32_t;
        variable st_conn : conn_t;
        variable st_base : u64_t;
        variable st_len, rg_len : u32_t;
        variable cnt : qcnt_t;
        variable x_to, x_nbase, x_n, x_mo, x_nlen, x_nrglen, x_staddr, x_rgaddr : u72_t;
        variable cs, cs2 : u144_t;
        variable sg : sg4_t;
        variable uz, z : std_ulogic_vector(3 downto 0);
        variable low : low4_t;
        variable cm : cm4_t;
        variable kj : u32_t;
        variable fl, dl : unsigned(LQ_c downto 0);   -- first + j, MSN - (first + j): low bits, carry/borrow
        variable hc : u2_t;
    begin
        hdr := c1_rec_reg.hdr;
        t := hdr(7);
        dv := unsigned(hdr(1 downto 0));
        rv := unsigned(hdr(15 downto 14));
        op := unsigned(hdr(11 downto 8));
        stag := be32(hdr, 2);           -- the STag, or a Send with Invalidate's
        to64 := be32(hdr, 6) & be32(hdr, 10);
        qn := be32(hdr, 6);
        msn := be32(hdr, 10);
        mo := be32(hdr, 14);
        n := p1_n;
        h_t <= t;
        h_l <= hdr(6);
        h_op <= op;
        h_stag <= stag;
        h_qn <= qn;
        h_msn <= msn;
        h_n <= n;
        -- The header's length, less the beat that was not queued for
        -- placement (drop).
        if t = '1' and p1_drop = '1' then
            h_hlen <= to_unsigned(HL14D_c, 5);
        elsif t = '1' then
            h_hlen <= to_unsigned(14, 5);
        elsif p1_drop = '1' then
            h_hlen <= to_unsigned(HL18D_c, 5);
        else
            h_hlen <= to_unsigned(18, 5);
        end if;
        optag := to_sl(op = 0 or op = 2);
        if op = 1 then
            opqn := "01";
        elsif op = 7 then
            opqn := "10";
        else
            opqn := "00";
        end if;
        -- rdmap.ClassifyHeader's order, after ddp.ParseHeader's length check.
        h_cerr <= '1';
        if p1_short = '1' then
            h_cerr_code <= ERR_RDMAP_STREAM_CATASTROPHIC;          -- RDMAP Remote Operation: catastrophic, stream
        elsif dv /= 1 then
            if t = '1' then
                h_cerr_code <= ERR_DDP_TAGGED_INVALID_VERSION;      -- DDP: invalid DDP version
            else
                h_cerr_code <= ERR_DDP_UNTAGGED_INVALID_VERSION;
            end if;
        elsif rv /= 1 then
            h_cerr_code <= ERR_RDMAP_INVALID_VERSION;          -- RDMAP: invalid RDMAP version
        elsif op(3) = '1' or optag /= t then
            h_cerr_code <= ERR_RDMAP_UNEXPECTED_OPCODE;          -- RDMAP: unexpected opcode
        elsif t = '0' and qn > 2 then
            h_cerr_code <= ERR_DDP_INVALID_QN;          -- DDP: invalid QN
        elsif t = '0' and qn(1 downto 0) /= opqn then
            h_cerr_code <= ERR_RDMAP_UNEXPECTED_OPCODE;
        else
            h_cerr <= '0';
            h_cerr_code <= x"0000";
        end if;
        cx := cx_rd_data;
        q := cx_q(cx.qs, std_ulogic_vector(qn(1 downto 0)));
        first := unsigned(q(Q_W_c - 1 downto RQ_AW + 1));
        cnt := unsigned(q(RQ_AW downto 0));
        h_cnt <= cnt;

        -- c1_arith: the STag entry and the posted buffer (see the comment at
        -- the C1 results above).
        st := st_rd_data;
        rg := rg_rd_data;
        st_valid := st(ST_W_c - 1);
        st_key := st(ADDR_W + 138 + CONN_W downto ADDR_W + 131 + CONN_W);
        st_pd := st(ADDR_W + 130 + CONN_W downto ADDR_W + 99 + CONN_W);
        st_bound := st(ADDR_W + 98 + CONN_W);
        st_conn := st(ADDR_W + 97 + CONN_W downto ADDR_W + 98);
        st_acc0 <= st(ADDR_W + 96);
        st_base := unsigned(st(ADDR_W + 95 downto ADDR_W + 32));
        st_len := unsigned(st(ADDR_W + 31 downto ADDR_W));
        rg_len := unsigned(rg(ID_W + 31 downto ID_W));
        rg_id <= rg(ID_W - 1 downto 0);
        x_to := resize(to64, 72);
        x_nbase := not resize(st_base, 72);
        x_n := resize(n, 72);
        x_mo := resize(mo, 72);
        x_nlen := not resize(st_len, 72);
        x_nrglen := not resize(rg_len, 72);
        x_staddr := resize(unsigned(st(ADDR_W - 1 downto 0)), 72);
        x_rgaddr := resize(unsigned(rg(RG_W_c - 1 downto ID_W + 32)), 72);
        -- TO < base: TO - base is negative.
        a_lt <= sum72a(x_to, x_nbase, '1');
        -- TO + n > base + len: TO + n - base - len - 1 (TO + n + not base +
        -- not len + 1) is not negative.
        cs := csa72(x_to, x_n, x_nbase);
        cs2 := csa72(cs(143 downto 72), cs(71 downto 0), x_nlen);
        a_gt <= sum72a(cs2(143 downto 72), cs2(71 downto 0) or to_unsigned(1, 72), '0');
        -- The host address: addr + TO - base (mod 2**64), or addr + MO.
        cs := csa72(x_staddr, x_to, x_nbase);
        a_dt <= sum72a(cs(143 downto 72), cs(71 downto 0) or to_unsigned(1, 72), '0');
        a_du <= sum72a(x_rgaddr, x_mo, '0');
        -- MO + n, and MO + n > the buffer's length: MO + n - len - 1 not
        -- negative.
        a_mon <= sum72a(x_mo, x_n, '0');
        cs := csa72(x_mo, x_n, x_nrglen);
        a_long <= sum72a(cs(143 downto 72), cs(71 downto 0), '0');
        -- A Read Request in one segment: MO 0 and 28 octets (rdmap.DeliveredReadRequest).
        a_rr_eq <= to_sl(mo = 0 and n = 28);
        a_msn1 <= fadd(msn, to_unsigned(0, 32), '1');
        -- TO + n carries out of 64 bits (n < 2**16).
        a_wrap <= to_sl(to64(63 downto 16) = (63 downto 16 => '1'))
                  and gt33(resize(to64(15 downto 0), 33), resize(not n, 33));
        a_mo_gt <= gt33('0' & mo, '0' & rg_len);
        c1_stag_bad <= (not st_valid) or to_sl(st_key /= std_ulogic_vector(stag(7 downto 0)))
                       or to_sl(shift_right(stag, 8 + STAG_AW) /= 0);
        c1_assoc_bad <= to_sl(st_pd /= cx.pd)
                        or (st_bound and to_sl(st_conn /= p1_conn));
        -- d_j = MSN - first - j = MSN + not first + (1 - j), for j
        -- deliveries of the queue that the context read has not seen (j =
        -- 0..3).
        for j in 0 to 3 loop
            kj := to_unsigned(1, 32) - to_unsigned(j, 32);
            cs := csa72(resize(msn, 72), resize(not first, 72), resize(kj, 72));
            sg(162 * j + 161 downto 162 * j) := sum72a(cs(143 downto 72) and MASK32_c,
                                                       cs(71 downto 0) and MASK32_c, '0');
            -- d_j = 0: MSN = first + j. d_j's bits LQ.. zero: MSN's bits LQ..
            -- are first + j's plus the borrow of d_j's low bits, that is
            -- first's plus hc (0..2). Both as equalities (sumeq) on MSN and
            -- first, not on the sums.
            z(j) := sumeq(resize(first, 72), to_unsigned(j, 72), '0', resize(msn, 72), MASK32_c);
            fl := ('0' & first(LQ_c - 1 downto 0)) + to_unsigned(j, LQ_c + 1);
            dl := ('0' & msn(LQ_c - 1 downto 0)) - ('0' & fl(LQ_c - 1 downto 0));
            hc := ('0' & fl(LQ_c)) + ('0' & dl(LQ_c));
            uz(j) := sumeq(shift_right(resize(first, 72), LQ_c), resize(hc, 72), '0',
                           shift_right(resize(msn, 72), LQ_c), MASK_HI_c);
            low(LQ_c * j + LQ_c - 1 downto LQ_c * j) := dl(LQ_c - 1 downto 0);
            cm((LQ_c + 1) * j + LQ_c downto (LQ_c + 1) * j) := ('0' & cnt) - to_unsigned(j, LQ_c + 1);
        end loop;
        a_sg <= sg;
        a_z <= z;
        a_uz <= uz;
        a_low <= low;
        a_cm <= cm;
    end process p_c1;

    -- C1b registers.
    p_c1b_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                b_valid_reg <= c1_valid_reg;
                b_conn_reg <= p1_conn;
                b_first_reg <= p1_first;
                b_early_reg <= p1_early;
                b_cx_reg <= cx_rd_data;
                b_t_reg <= h_t;
                b_l_reg <= h_l;
                b_op_reg <= h_op;
                b_stag_reg <= h_stag;
                b_msn_reg <= h_msn;
                b_msn1_reg <= a_msn1(31 downto 0);
                b_qn_reg <= h_qn(1 downto 0);
                b_n_reg <= h_n;
                b_hlen_reg <= h_hlen;
                b_cerr_reg <= h_cerr;
                b_cerr_code_reg <= h_cerr_code;
                b_stag_bad_reg <= c1_stag_bad;
                b_assoc_bad_reg <= c1_assoc_bad;
                b_acc_reg <= not st_acc0;
                b_wrap_reg <= a_wrap;
                b_mo_gt_reg <= a_mo_gt;
                b_rr_eq_reg <= a_rr_eq;
                b_lt_a <= a_lt;
                b_gt_a <= a_gt;
                b_dt_a <= a_dt;
                b_du_a <= a_du;
                b_mon_a <= a_mon;
                b_long_a <= a_long;
                b_sg_a <= a_sg;
                b_uz_reg <= a_uz;
                b_z_reg <= a_z;
                b_low_reg <= a_low;
                b_cm_reg <= a_cm;
                b_id_reg <= rg_id;
                b_st_reg <= st_rd_data(ST_W_c - 2 downto 0);
            end if;
            if rst = '1' then
                b_valid_reg <= '0';
            end if;
        end if;
    end process p_c1b_reg;

    -- C1b: the sums' second clock, and the window checks: d_j outside 0 ..
    -- count - j - 1 (its bits above RQ_AW not zero, or its low bits at or
    -- past count - j).
    p_c1b_sums : process (all) is
        variable sg : u73_t;
    begin
        bs_lt <= sum72b(b_lt_a);
        bs_gt <= sum72b(b_gt_a);
        bs_dt <= sum72b(b_dt_a);
        bs_du <= sum72b(b_du_a);
        bs_mon <= sum72b(b_mon_a);
        bs_long <= sum72b(b_long_a);
        for j in 0 to 3 loop
            sg := sum72b(b_sg_a(162 * j + 161 downto 162 * j));
            bs_behind(j) <= sg(31);
            bs_nobuf(j) <= (not b_uz_reg(j))
                           or to_sl(('0' & b_low_reg(LQ_c * j + LQ_c - 1 downto LQ_c * j))
                                    >= b_cm_reg((LQ_c + 1) * j + LQ_c downto (LQ_c + 1) * j));
        end loop;
    end process p_c1b_sums;

    c1b <= (
           conn => b_conn_reg,
           first => b_first_reg,
           early => b_early_reg,
           cx => b_cx_reg,
           t => b_t_reg,
           l => b_l_reg,
           op => b_op_reg,
           stag => b_stag_reg,
           msn => b_msn_reg,
           msn1 => b_msn1_reg,
           qn => b_qn_reg,
           n => b_n_reg,
           hlen => b_hlen_reg,
           cerr => b_cerr_reg,
           cerr_code => b_cerr_code_reg,
           stag_bad => b_stag_bad_reg,
           assoc_bad => b_assoc_bad_reg,
           acc => b_acc_reg,
           wrap => b_wrap_reg,
           mo_gt => b_mo_gt_reg,
           rr_eq => b_rr_eq_reg,
           z => b_z_reg,
           id => b_id_reg,
           st => b_st_reg,
           lt => bs_lt,
           gt => bs_gt,
           dt => bs_dt,
           du => bs_du,
           mon => bs_mon,
           long => bs_long,
           nobuf => bs_nobuf,
           behind => bs_behind
    );

end architecture rtl;
