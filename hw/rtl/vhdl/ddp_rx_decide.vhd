-- ddp_rx_decide: stage C2 of ddp_rx's check pipeline, the decision.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_decide.v: the same ports, registers and
-- clock counts (the Verilog has the design in full; hw/rtl/vhdl/ddp_rx.vhd
-- instantiates this stage once). Records and constants: ddp_rx_pkg.vhd.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;
use work.rnic_codes_pkg.all;  -- ERR_*: generated from the Go model (internal/hdlcodes)
use work.ddp_rx_pkg.all;

entity ddp_rx_decide is
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
        cut_reg : in std_ulogic_vector(2 ** CONN_W - 1 downto 0);
        cut_set : in std_ulogic;
        cut_set_conn : in std_ulogic_vector(CONN_W - 1 downto 0);
        c_adv : in std_ulogic;
        p1_conn : in std_ulogic_vector(CONN_W - 1 downto 0);
        b_valid_reg : in std_ulogic;
        c1b : in c1b_r(conn(CONN_W - 1 downto 0), cx(qs(3 * (32 + RQ_AW + 1) - 1 downto 0)), id(ID_W - 1 downto 0),
                   st(st_w(CONN_W, ADDR_W) - 2 downto 0));
        dc_out_ready : in std_ulogic;
        dc_in_ready : out std_ulogic := '0';
        c2_valid_reg : out std_ulogic := '0';
        c2_conn_reg : out std_ulogic_vector(CONN_W - 1 downto 0) := (others => '0');
        c2_first_reg : out std_ulogic := '0';
        c2_early_reg : out std_ulogic := '0';
        e_st_reg : out std_ulogic_vector(st_w(CONN_W, ADDR_W) - 2 downto 0) := (others => '0');
        k_idx : out std_ulogic_vector(STAG_AW - 1 downto 0) := (others => '0');
        r_inval : out std_ulogic := '0';
        c_en : out std_ulogic := '0';
        r_cx : out cx_r(qs(3 * (32 + RQ_AW + 1) - 1 downto 0)) := cx_zero(RQ_AW);
        c2_go : out std_ulogic := '0';
        c2_decide : out std_ulogic := '0';
        c2_err : out std_ulogic := '0';              -- c2_decide of an error (K_ERR): ddp_rx's te_ram
        c2_err_code : out std_ulogic_vector(15 downto 0) := (others => '0');   -- its ERR_* word
        dc_out : out dc_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                      su(su_w(DATA_W) - 1 downto 0)) := dc_zero(DATA_W, CONN_W, ADDR_W, ID_W);
        dc_out_valid : out std_ulogic := '0'
    );
end entity ddp_rx_decide;

architecture rtl of ddp_rx_decide is

    package cfg is new work.ddp_rx_cfg_pkg
        generic map (DATA_W => DATA_W, CONN_W => CONN_W, STAG_AW => STAG_AW, RQ_AW => RQ_AW, ADDR_W => ADDR_W, ID_W => ID_W,
                     BURST => BURST, REC_AW => REC_AW, BQ_AW => BQ_AW, AXI_W => AXI_W, WR_REQ => WR_REQ);
    use cfg.all;

    -- The records (ddp_rx_pkg) with this block's widths.
    subtype rec_t is rec_r(id(ID_W - 1 downto 0));
    subtype cx_t is cx_r(qs(3 * Q_W_c - 1 downto 0));
    subtype dc_t is dc_r(conn(CONN_W - 1 downto 0), dest(ADDR_W - 1 downto 0), rec(id(ID_W - 1 downto 0)),
                         su(SU_W_c - 1 downto 0));
    constant REC_ZERO_c : rec_t := rec_zero(ID_W);
    constant CX_ZERO_c : cx_t := cx_zero(RQ_AW);
    constant DC_ZERO_c : dc_t := dc_zero(DATA_W, CONN_W, ADDR_W, ID_W);

    signal c2_cx_reg : cx_t := CX_ZERO_c;
    signal k_tagged_reg, k_l_reg : std_ulogic := '0';
    signal k_op_reg : u4_t := (others => '0');
    signal k_stag_reg, k_msn_reg, k_msn1_reg : u32_t := (others => '0');
    signal k_qn_reg : u2_t := (others => '0');
    signal k_n_reg : u16_t := (others => '0');
    signal k_hlen_reg : u5_t := (others => '0');
    signal k_cerr_reg : std_ulogic := '0';
    signal k_cerr_code_reg : w16_t := (others => '0');
    signal e_t_inv_reg, e_t_assoc_reg, e_t_acc_reg, e_t_wrap_reg, e_t_bounds_reg : std_ulogic := '0';
    signal e_u_nobuf_reg, e_u_behind_reg, e_u_lorder_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal e_u_mo_reg, e_u_long_reg : std_ulogic := '0';
    signal e_i_bad_reg, e_rr_bad_reg : std_ulogic := '0';
    signal e_dt_reg, e_du_reg : addr_t := (others => '0');
    signal e_len_reg : u32_t := (others => '0');
    signal e_id_reg : id_t := (others => '0');
    -- The last three decisions (0 the newest): valid, conn, context
    -- written, popped, popped QN, invalidated, invalidated index; the oldest
    -- needs only what fs/fq/fk (below) do not say.
    signal hs0_valid_reg, hs1_valid_reg : std_ulogic := '0';
    signal hs0_conn_reg, hs1_conn_reg : conn_t := (others => '0');
    signal hs0_cx_reg, hs1_cx_reg, hs2_cx_reg : cx_t := CX_ZERO_c;
    signal hs0_pop_reg, hs1_pop_reg, hs2_pop_reg : std_ulogic := '0';
    signal hs0_qn_reg, hs1_qn_reg : u2_t := (others => '0');
    signal hs0_inv_reg, hs1_inv_reg, hs2_inv_reg : std_ulogic := '0';
    signal hs0_idx_reg, hs1_idx_reg : stagi_t := (others => '0');
    -- Which of the last three decisions C2's piece must take in, worked out
    -- as the pieces move up (so C2 has no comparison of its own to make):
    -- fs, the decision is of the same connection; fq, and of the same
    -- queue; fk, it invalidated (if it did) the STag index the piece uses.
    -- Bit k is for hs<k> as it will be after the next move.
    signal fs_reg, fq_reg, fk_reg : std_ulogic_vector(2 downto 0) := (others => '0');
    signal b_idx : stagi_t := (others => '0');
    signal b_hgrp_reg : hgrp_t := (others => '0');
    signal c2_herr_reg : std_ulogic := '0';
    signal r_kind : u2_t := (others => '0');
    signal r_place, r_pop : std_ulogic := '0';
    signal r_dest : addr_t := (others => '0');
    signal r_rec : rec_t := REC_ZERO_c;
    signal c2_su_t, c2_su_u, c2_su : su_t := (others => '0');
    signal dc_in_data : dc_t := DC_ZERO_c;
    signal dc_out_bits : std_logic_vector(DC_W_c - 1 downto 0) := (others => '0');

    -- C1b's registers and sums (ddp_rx_check), by their names there.
    alias b_conn_reg is c1b.conn;
    alias b_first_reg is c1b.first;
    alias b_early_reg is c1b.early;
    alias b_cx_reg is c1b.cx;
    alias b_t_reg is c1b.t;
    alias b_l_reg is c1b.l;
    alias b_op_reg is c1b.op;
    alias b_stag_reg is c1b.stag;
    alias b_msn_reg is c1b.msn;
    alias b_msn1_reg is c1b.msn1;
    alias b_qn_reg is c1b.qn;
    alias b_n_reg is c1b.n;
    alias b_hlen_reg is c1b.hlen;
    alias b_cerr_reg is c1b.cerr;
    alias b_cerr_code_reg is c1b.cerr_code;
    alias b_stag_bad_reg is c1b.stag_bad;
    alias b_assoc_bad_reg is c1b.assoc_bad;
    alias b_acc_reg is c1b.acc;
    alias b_wrap_reg is c1b.wrap;
    alias b_mo_gt_reg is c1b.mo_gt;
    alias b_rr_eq_reg is c1b.rr_eq;
    alias b_z_reg is c1b.z;
    alias b_id_reg is c1b.id;
    alias b_st_reg is c1b.st;
    alias bs_lt is c1b.lt;
    alias bs_gt is c1b.gt;
    alias bs_dt is c1b.dt;
    alias bs_du is c1b.du;
    alias bs_mon is c1b.mon;
    alias bs_long is c1b.long;
    alias bs_nobuf is c1b.nobuf;
    alias bs_behind is c1b.behind;

begin

    -- C2 registers.
    p_c2_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                c2_valid_reg <= b_valid_reg;
                c2_conn_reg <= b_conn_reg;
                c2_first_reg <= b_first_reg;
                c2_early_reg <= b_early_reg;
                c2_cx_reg <= b_cx_reg;
                k_tagged_reg <= b_t_reg;
                k_l_reg <= b_l_reg;
                k_op_reg <= b_op_reg;
                k_stag_reg <= b_stag_reg;
                k_msn_reg <= b_msn_reg;
                k_msn1_reg <= b_msn1_reg;
                k_qn_reg <= b_qn_reg;
                k_n_reg <= b_n_reg;
                k_hlen_reg <= b_hlen_reg;
                k_cerr_reg <= b_cerr_reg;
                k_cerr_code_reg <= b_cerr_code_reg;
                -- ddp.STagTable.checkLocked (RFC 5041 7.1, 8.2) for the whole
                -- segment, and ddp.Sink.checkUntagged.
                e_t_inv_reg <= b_stag_bad_reg;
                e_t_assoc_reg <= b_assoc_bad_reg;
                e_t_acc_reg <= b_acc_reg;
                e_t_wrap_reg <= b_wrap_reg;
                e_t_bounds_reg <= bs_lt(71) or not bs_gt(71);
                e_dt_reg <= bs_dt(ADDR_W - 1 downto 0);
                e_u_nobuf_reg <= bs_nobuf;
                e_u_behind_reg <= bs_behind;
                e_u_lorder_reg <= (3 downto 0 => b_l_reg) and not b_z_reg;
                e_u_mo_reg <= b_mo_gt_reg;
                e_u_long_reg <= not bs_long(71);
                e_du_reg <= bs_du(ADDR_W - 1 downto 0);
                e_len_reg <= bs_mon(31 downto 0);
                e_id_reg <= b_id_reg;
                -- rdmap.Invalidate: ddp.STagTable.InvalidateRemote's checks.
                e_i_bad_reg <= b_stag_bad_reg or b_assoc_bad_reg;
                e_rr_bad_reg <= not b_rr_eq_reg;
                e_st_reg <= b_st_reg;
            end if;
            if rst = '1' then
                c2_valid_reg <= '0';
            end if;
        end if;
    end process p_c2_reg;

    k_idx <= std_ulogic_vector(k_stag_reg(8 + STAG_AW - 1 downto 8));
    b_idx <= std_ulogic_vector(b_stag_reg(8 + STAG_AW - 1 downto 8));

    p_herr_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                -- (cut_reg too: a cut stream places nothing more.)
                b_hgrp_reg <= herr_group(herr_reg or cut_reg, p1_conn) or herr_group_set(p1_conn, herr_set, herr_set_conn)
                              or herr_group_set(p1_conn, cut_set, cut_set_conn);
                c2_herr_reg <= herr_bit(b_hgrp_reg, b_conn_reg) or (herr_set and to_sl(herr_set_conn = b_conn_reg))
                               or (cut_set and to_sl(cut_set_conn = b_conn_reg));
            else
                b_hgrp_reg <= b_hgrp_reg or herr_group_set(b_conn_reg, herr_set, herr_set_conn)
                              or herr_group_set(b_conn_reg, cut_set, cut_set_conn);
                c2_herr_reg <= c2_herr_reg or (herr_set and to_sl(herr_set_conn = c2_conn_reg))
                               or (cut_set and to_sl(cut_set_conn = c2_conn_reg));
            end if;
        end if;
    end process p_herr_reg;

    -- C2: decision, with the effects of the decisions the tables had not seen.
    p_c2 : process (all) is
        variable same0, same1, same2 : boolean;
        variable f_cx : cx_t;
        variable pops : natural range 0 to 3;
        variable killed : boolean;
        variable t_inv, i_bad, u_nobuf, u_behind, u_lorder : std_ulogic;
        variable en, fail : std_ulogic;
        variable kind : u2_t;
        variable err : w16_t;
        variable place, pop, inval : std_ulogic;
        variable dest : addr_t;
        variable cx : cx_t;
        variable nz : std_ulogic;
        variable inv_stag : u32_t;
    begin
        same0 := fs_reg(0) = '1';
        same1 := fs_reg(1) = '1';
        same2 := fs_reg(2) = '1';
        if same0 then
            f_cx := hs0_cx_reg;
        elsif same1 then
            f_cx := hs1_cx_reg;
        elsif same2 then
            f_cx := hs2_cx_reg;
        else
            f_cx := c2_cx_reg;
        end if;
        pops := 0;
        if fq_reg(0) = '1' and hs0_pop_reg = '1' then
            pops := pops + 1;
        end if;
        if fq_reg(1) = '1' and hs1_pop_reg = '1' then
            pops := pops + 1;
        end if;
        if fq_reg(2) = '1' and hs2_pop_reg = '1' then
            pops := pops + 1;
        end if;
        killed := (fk_reg(0) = '1' and hs0_inv_reg = '1') or (fk_reg(1) = '1' and hs1_inv_reg = '1')
                  or (fk_reg(2) = '1' and hs2_inv_reg = '1');
        t_inv := e_t_inv_reg or to_sl(killed);
        i_bad := e_i_bad_reg or to_sl(killed);
        u_nobuf := e_u_nobuf_reg(pops);
        u_behind := e_u_behind_reg(pops);
        u_lorder := e_u_lorder_reg(pops);

        en := c2_cx_reg.en;
        fail := f_cx.fail;
        nz := to_sl(k_n_reg /= 0);
        kind := K_NONE_c;
        err := x"0000";
        place := '0';
        pop := '0';
        inval := '0';
        dest := e_du_reg;
        if fail = '1' or en = '0' or c2_herr_reg = '1' then
            kind := K_NONE_c;            -- the stream has failed: dropped
        elsif k_cerr_reg = '1' then
            kind := K_ERR_c;
            err := k_cerr_code_reg;
        elsif k_tagged_reg = '1' then
            dest := e_dt_reg;
            if nz = '1' and t_inv = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_INVALID_STAG;          -- DDP tagged: invalid STag
            elsif nz = '1' and e_t_assoc_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_STAG_NOT_ASSOCIATED;          -- DDP tagged: STag not associated with stream
            elsif nz = '1' and e_t_acc_reg = '1' then
                kind := K_ERR_c;
                err := ERR_RDMAP_ACCESS_RIGHTS;          -- RDMAP remote protection: access rights
            elsif nz = '1' and e_t_wrap_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_TO_WRAP;          -- DDP tagged: TO wrap
            elsif nz = '1' and e_t_bounds_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_BASE_BOUNDS;          -- DDP tagged: base or bounds
            else
                place := nz;
                if k_l_reg = '1' then
                    kind := K_CPL_c;
                else
                    kind := K_NONE_c;
                end if;
            end if;
        else
            if u_nobuf = '1' then
                kind := K_ERR_c;
                if u_behind = '1' then
                    err := ERR_DDP_MSN_RANGE;
                else
                    err := ERR_DDP_NO_BUFFER;
                end if;
            elsif e_u_mo_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_INVALID_MO;          -- DDP untagged: invalid MO
            elsif e_u_long_reg = '1' then
                kind := K_ERR_c;
                err := ERR_DDP_TOO_LONG;          -- DDP untagged: message too long
            elsif u_lorder = '1' and c2_early_reg = '0' then
                kind := K_ERR_c;
                err := ERR_DDP_MSN_RANGE;          -- DDP untagged: MSN range
            else
                place := nz;
                pop := k_l_reg;
                if k_l_reg = '0' then
                    kind := K_NONE_c;
                elsif k_op_reg = 1 and e_rr_bad_reg = '1' then
                    kind := K_ERR_c;
                    err := ERR_RDMAP_STREAM_CATASTROPHIC;      -- rdmap.DeliveredReadRequest: not one 28-octet segment
                elsif k_op_reg = 7 then
                    kind := K_TERM_c;
                elsif (k_op_reg = 4 or k_op_reg = 6) and i_bad = '1' then
                    kind := K_ERR_c;
                    err := ERR_RDMAP_CANNOT_INVALIDATE;      -- RDMAP remote protection: cannot invalidate
                else
                    kind := K_CPL_c;
                    inval := to_sl(k_op_reg = 4 or k_op_reg = 6);
                end if;
            end if;
        end if;
        if c2_early_reg = '1' then
            -- Placed early (ddp.Sink.Place): the checks above, but for the
            -- last-segment order, decide whether it is placed, and that is
            -- all. Nothing is reported, delivered or changed.
            kind := K_NONE_c;
            err := x"0000";
            pop := '0';
            inval := '0';
        end if;
        cx := (en => c2_cx_reg.en, pd => c2_cx_reg.pd,
               fail => fail or to_sl(kind = K_ERR_c) or to_sl(kind = K_TERM_c), qs => f_cx.qs);
        if pop = '1' then
            case k_qn_reg is
                when "01" =>
                    cx.qs(2 * Q_W_c - 1 downto Q_W_c) := q_pop(unsigned(f_cx.qs(Q_W_c + RQ_AW downto Q_W_c)), k_msn1_reg);
                when "10" =>
                    cx.qs(3 * Q_W_c - 1 downto 2 * Q_W_c) :=
                        q_pop(unsigned(f_cx.qs(2 * Q_W_c + RQ_AW downto 2 * Q_W_c)), k_msn1_reg);
                when others =>
                    cx.qs(Q_W_c - 1 downto 0) := q_pop(unsigned(f_cx.qs(RQ_AW downto 0)), k_msn1_reg);
            end case;
        end if;
        if k_tagged_reg = '1' then
            r_rec <= (kind => kind, opcode => std_ulogic_vector(k_op_reg), tagged => '1', qn => "00",
                      msn => (others => '0'), len => (others => '0'), id => (ID_W - 1 downto 0 => '0'),
                      stag => std_ulogic_vector(k_stag_reg), inv_stag => (others => '0'), err => err);
        else
            if inval = '1' then
                inv_stag := k_stag_reg;
            else
                inv_stag := (others => '0');
            end if;
            r_rec <= (kind => kind, opcode => std_ulogic_vector(k_op_reg), tagged => '0',
                      qn => std_ulogic_vector(k_qn_reg), msn => std_ulogic_vector(k_msn_reg),
                      len => std_ulogic_vector(e_len_reg), id => e_id_reg, stag => (others => '0'),
                      inv_stag => std_ulogic_vector(inv_stag), err => err);
        end if;
        c_en <= en;
        r_kind <= kind;
        r_place <= place;
        r_pop <= pop;
        r_inval <= inval;
        r_dest <= dest;
        r_cx <= cx;
    end process p_c2;

    c2_go <= c_adv and c2_valid_reg;
    c2_decide <= c2_go and c2_first_reg;
    c2_err <= c2_go and c2_first_reg and to_sl(r_kind = K_ERR_c);
    c2_err_code <= r_rec.err;

    p_hs_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if c_adv = '1' then
                hs2_cx_reg <= hs1_cx_reg;
                hs2_pop_reg <= hs1_pop_reg;
                hs2_inv_reg <= hs1_inv_reg;
                hs1_valid_reg <= hs0_valid_reg;
                hs1_conn_reg <= hs0_conn_reg;
                hs1_cx_reg <= hs0_cx_reg;
                hs1_pop_reg <= hs0_pop_reg;
                hs1_qn_reg <= hs0_qn_reg;
                hs1_inv_reg <= hs0_inv_reg;
                hs1_idx_reg <= hs0_idx_reg;
                hs0_valid_reg <= c2_valid_reg and c2_first_reg;
                fs_reg <= (hs1_valid_reg and to_sl(hs1_conn_reg = b_conn_reg))
                          & (hs0_valid_reg and to_sl(hs0_conn_reg = b_conn_reg))
                          & (c2_valid_reg and c2_first_reg and to_sl(c2_conn_reg = b_conn_reg));
                fq_reg <= (hs1_valid_reg and to_sl(hs1_conn_reg = b_conn_reg and hs1_qn_reg = b_qn_reg))
                          & (hs0_valid_reg and to_sl(hs0_conn_reg = b_conn_reg and hs0_qn_reg = b_qn_reg))
                          & (c2_valid_reg and c2_first_reg
                             and to_sl(c2_conn_reg = b_conn_reg and k_qn_reg = b_qn_reg));
                fk_reg <= (hs1_valid_reg and to_sl(hs1_idx_reg = b_idx))
                          & (hs0_valid_reg and to_sl(hs0_idx_reg = b_idx))
                          & (c2_valid_reg and c2_first_reg and to_sl(k_idx = b_idx));
                hs0_conn_reg <= c2_conn_reg;
                hs0_cx_reg <= r_cx;
                hs0_pop_reg <= r_pop;
                hs0_qn_reg <= k_qn_reg;
                hs0_inv_reg <= r_inval;
                hs0_idx_reg <= k_idx;
            end if;
            if rst = '1' then
                hs0_valid_reg <= '0';
                hs1_valid_reg <= '0';
                fs_reg <= "000";
                fq_reg <= "000";
                fk_reg <= "000";
            end if;
        end if;
    end process p_hs_reg;

    -- Descriptors to placement. The placement set-up of a first piece is
    -- worked out here, from the registers alone, for both addresses the
    -- decision may pick (a tagged segment's e_dt or an untagged one's e_du:
    -- the one not picked only matters when nothing is placed), so that D0
    -- only selects it.
    c2_su_t <= pl_setup(e_dt_reg(LG_c - 1 downto 0), k_hlen_reg, k_n_reg);
    c2_su_u <= pl_setup(e_du_reg(LG_c - 1 downto 0), k_hlen_reg, k_n_reg);
    c2_su <= c2_su_t when k_tagged_reg = '1' else c2_su_u;
    dc_in_data <= (early => c2_early_reg, conn => c2_conn_reg, first => c2_first_reg, en => c_en, place => r_place,
                   dest => r_dest, s => k_hlen_reg, remain => k_n_reg, rec => r_rec, su => c2_su);

    dc_fifo : entity work.ddp_rx_fifo
        generic map (WIDTH => DC_W_c, AW => 2)
        port map (
            clk => clk, rst => rst,
            in_data => to_slv(dc_in_data), in_valid => c2_go, in_ready => dc_in_ready,
            in_data2 => to_slv(dc_in_data), in_valid2 => '0', in_ready2 => open,
            out_data => dc_out_bits, out_valid => dc_out_valid, out_ready => dc_out_ready
        );

    dc_out <= to_dc(dc_out_bits, DATA_W, CONN_W, ADDR_W, ID_W);

end architecture rtl;
