-- ddp_rx_pkg: what ddp_rx (hw/rtl/vhdl/ddp_rx.vhd) and its stage entities
-- (hw/rtl/vhdl/ddp_rx_<stage>.vhd) share; the VHDL-2008 counterpart of
-- hw/rtl/ddp_rx_defs.vh.
--
-- Two packages:
--   ddp_rx_pkg      the widths of the records as functions of the generics
--                   (for the stages' port declarations, which come before
--                   any package a stage can instantiate);
--   ddp_rx_cfg_pkg  generic on ddp_rx's generics: the constants, subtypes
--                   and helper functions of the block; every stage
--                   instantiates it with its own generics
--                   (package cfg is new work.ddp_rx_cfg_pkg ...).
--
-- Build order: analysed after rnic_pkg and rnic_codes_pkg, which it uses
-- (tests/hdlsim.py orders the *_pkg.vhd files by their use clauses; the
-- Makefile's GHDL lint imports every file and lets GHDL order them).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

package ddp_rx_pkg is
    -- Delivery record of a ULPDU (REC).
    function recc_w(id_w : natural) return positive;
    -- Check context of a connection (CX).
    function cx_w(rq_aw : natural) return positive;
    -- Placement context of a connection (DX).
    function dx_w(addr_w : natural; id_w : natural) return positive;
    -- STag entry.
    function st_w(conn_w : natural; addr_w : natural) return positive;
    -- Posted buffer.
    function rg_w(addr_w : natural; id_w : natural) return positive;
    -- Delivery record queued for V0 (RF).
    function rf_w(conn_w : natural; id_w : natural; bq_aw : natural) return positive;
    -- Header record of a piece (HF).
    function hf_w(conn_w : natural) return positive;
    -- Input beat (DF).
    function df_w(data_w : natural) return positive;
    -- Placement descriptor of a piece (DC).
    function dc_w(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return positive;
end package ddp_rx_pkg;

package body ddp_rx_pkg is
    function recc_w(id_w : natural) return positive is
    begin
        return 2 + 4 + 1 + 2 + 32 + 32 + id_w + 32 + 32 + 4 + 4 + 8;
    end function recc_w;

    function cx_w(rq_aw : natural) return positive is
    begin
        return 1 + 32 + 1 + 3 * (32 + rq_aw + 1);
    end function cx_w;

    function dx_w(addr_w : natural; id_w : natural) return positive is
    begin
        return 1 + addr_w + 16 + recc_w(id_w) + 224;
    end function dx_w;

    function st_w(conn_w : natural; addr_w : natural) return positive is
    begin
        return 1 + 8 + 32 + 1 + conn_w + 2 + 64 + 32 + addr_w;
    end function st_w;

    function rg_w(addr_w : natural; id_w : natural) return positive is
    begin
        return addr_w + 32 + id_w;
    end function rg_w;

    function rf_w(conn_w : natural; id_w : natural; bq_aw : natural) return positive is
    begin
        return 1 + (bq_aw + 3) + conn_w + recc_w(id_w) + 224;
    end function rf_w;

    function hf_w(conn_w : natural) return positive is
    begin
        return 1 + 1 + 1 + 16 + 16 + conn_w + 1 + 144;
    end function hf_w;

    function df_w(data_w : natural) return positive is
    begin
        return data_w + data_w / 8 + 2;
    end function df_w;

    function dc_w(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return positive is
        constant lg : natural := clog2(data_w / 8);
    begin
        return 1 + conn_w + 3 + addr_w + 5 + 16 + recc_w(id_w) + (lg + 3 + lg + 18 + 20);
    end function dc_w;
end package body ddp_rx_pkg;

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

package ddp_rx_cfg_pkg is
    generic (
        DATA_W  : natural;
        CONN_W  : natural;
        STAG_AW : natural;
        RQ_AW   : natural;
        ADDR_W  : natural;
        ID_W    : natural;
        BURST   : natural;
        REC_AW  : natural;
        BQ_AW   : natural;
        AXI_W   : natural;
        WR_REQ  : natural
    );

    constant KEEP_W_c : positive := DATA_W / 8;                   -- lanes, N
    constant LG_c     : positive := clog2(KEEP_W_c);
    constant HB_c     : positive := (18 + KEEP_W_c - 1) / KEEP_W_c;   -- beats that hold an untagged header
    constant HBT_c    : positive := (14 + KEEP_W_c - 1) / KEEP_W_c;   -- beats that hold a tagged one

    -- At W=64 a first piece's beat 0 holds header octets only: it is not
    -- queued for placement unless it is the piece's last (see ddp_rx.v).
    constant DROP0_c  : natural := boolean'pos(KEEP_W_c < 14);
    constant HL14D_c  : natural := 14 - DROP0_c * KEEP_W_c;       -- header lengths less a dropped beat
    constant HL18D_c  : natural := 18 - DROP0_c * KEEP_W_c;
    constant BW_c     : positive := clog2(BURST);
    constant NCONN_c  : positive := 2 ** CONN_W;
    constant RG_AW_c  : positive := CONN_W + 2 + RQ_AW;           -- conn & qn & slot

    -- Per-queue state: first MSN & count.
    constant Q_W_c    : positive := 32 + RQ_AW + 1;

    -- Delivery record of a ULPDU: kind & opcode & tagged & qn & msn & len &
    -- id & stag & inv_stag & layer & etype & code.
    constant RECC_W_c : positive := 2 + 4 + 1 + 2 + 32 + 32 + ID_W + 32 + 32 + 4 + 4 + 8;

    -- Check context of a connection: enable & pd & fail & q2 & q1 & q0.
    constant CX_W_c   : positive := 1 + 32 + 1 + 3 * Q_W_c;

    -- Placement context: place & nxt & remain & rec & rr.
    constant DX_W_c   : positive := 1 + ADDR_W + 16 + RECC_W_c + 224;

    -- STag entry: valid & key & pd & bound & conn & access & base & len & addr.
    constant ST_W_c   : positive := 1 + 8 + 32 + 1 + CONN_W + 2 + 64 + 32 + ADDR_W;

    -- Posted buffer: addr & len & id.
    constant RG_W_c   : positive := ADDR_W + 32 + ID_W;
    constant MK_W_c   : positive := BQ_AW + 3;                     -- burst counts, modulo 2**MK_W (see b_hold)
    constant RF_W_c   : positive := 1 + MK_W_c + CONN_W + RECC_W_c + 224;   -- enabled & mark & conn & rec & rr

    -- Header record of a piece: drop & early & short & n & ulen & conn &
    -- first & octets 0..17 (drop: its beat 0 was not queued, W=64).
    constant HF_W_c   : positive := 1 + 1 + 1 + 16 + 16 + CONN_W + 1 + 144;

    -- Input beat: data & keep & tlast & ULPDU last.
    constant DF_W_c   : positive := DATA_W + KEEP_W_c + 2;

    -- Placement set-up of a piece (pl_setup): r & m0 & ylo & left & q1.
    constant SU_W_c   : positive := LG_c + 3 + LG_c + 18 + 20;

    -- Placement descriptor: early & conn & first & enabled & place & dest &
    -- s & remain & rec & set-up.
    constant DC_W_c   : positive := 1 + CONN_W + 3 + ADDR_W + 5 + 16 + RECC_W_c + SU_W_c;

    -- STag write generation (the cut of a ULPDU between its pieces).
    constant GEN_W_c  : positive := 16;
    constant REC_TAGGED_c : natural := RECC_W_c - 7;             -- a record's tagged bit
    constant REC_STAG_c : natural := 48;                         -- a tagged record's STag, 32 bits
    constant W_W_c    : positive := DATA_W + KEEP_W_c + 1;          -- W queue word: data & strb & last
    constant AWQ_W_c  : positive := ADDR_W + 8;                     -- AW queue word: addr & len
    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(KEEP_W_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype addr_t is unsigned(ADDR_W - 1 downto 0);
    subtype rec_t is std_ulogic_vector(RECC_W_c - 1 downto 0);
    subtype rr_t is std_ulogic_vector(223 downto 0);
    subtype hdr_t is std_ulogic_vector(143 downto 0);
    subtype cx_t is std_ulogic_vector(CX_W_c - 1 downto 0);
    subtype q_t is std_ulogic_vector(Q_W_c - 1 downto 0);
    subtype qs_t is std_ulogic_vector(3 * Q_W_c - 1 downto 0);
    subtype qcnt_t is unsigned(RQ_AW downto 0);
    subtype st_t is std_ulogic_vector(ST_W_c - 1 downto 0);
    subtype rg_t is std_ulogic_vector(RG_W_c - 1 downto 0);
    subtype dx_t is std_ulogic_vector(DX_W_c - 1 downto 0);
    subtype rf_t is std_ulogic_vector(RF_W_c - 1 downto 0);
    subtype hf_t is std_ulogic_vector(HF_W_c - 1 downto 0);
    subtype df_t is std_ulogic_vector(DF_W_c - 1 downto 0);
    subtype dc_t is std_ulogic_vector(DC_W_c - 1 downto 0);
    subtype gen_t is std_ulogic_vector(GEN_W_c - 1 downto 0);
    subtype su_t is std_ulogic_vector(SU_W_c - 1 downto 0);
    subtype ww_t is std_ulogic_vector(W_W_c - 1 downto 0);
    subtype aww_t is std_ulogic_vector(AWQ_W_c - 1 downto 0);
    subtype mk_t is unsigned(MK_W_c - 1 downto 0);
    subtype lane_t is unsigned(LG_c - 1 downto 0);
    subtype bofs_t is unsigned(BW_c - 1 downto 0);
    subtype stagi_t is std_ulogic_vector(STAG_AW - 1 downto 0);
    subtype id_t is std_ulogic_vector(ID_W - 1 downto 0);
    subtype u2_t is unsigned(1 downto 0);
    subtype u4_t is unsigned(3 downto 0);
    subtype u5_t is unsigned(4 downto 0);
    subtype u8_t is unsigned(7 downto 0);
    subtype u13_t is unsigned(12 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype u17_t is unsigned(16 downto 0);
    subtype u18_t is unsigned(17 downto 0);
    subtype u20_t is unsigned(19 downto 0);
    subtype u32_t is unsigned(31 downto 0);
    subtype w16_t is std_ulogic_vector(15 downto 0);
    subtype w32_t is std_ulogic_vector(31 downto 0);
    constant K_NONE_c : u2_t := "00";
    constant K_CPL_c  : u2_t := "01";
    constant K_ERR_c  : u2_t := "10";
    constant K_TERM_c : u2_t := "11";
    constant D_DATA_c  : u2_t := "00";
    constant D_FLUSH_c : u2_t := "01";
    constant D_PAD_c   : u2_t := "10";
    constant N18_c : u18_t := to_unsigned(KEEP_W_c, 18);
    constant Q_INIT_c : q_t := std_ulogic_vector(to_unsigned(1, 32)) & (RQ_AW downto 0 => '0');
    constant BEND1_c : bofs_t := to_unsigned(2 ** BW_c - 2, BW_c);  -- the block's last beat but one
    constant QFULL_c : qcnt_t := to_unsigned(2 ** RQ_AW, RQ_AW + 1);  -- 2**RQ_AW

    -- pl_setup(dlo, s, remain): what placement needs of a piece whose first
    -- payload octet goes to a host address with low bits dlo, at octet s of
    -- the piece, with remain payload octets to the end of the ULPDU. Octet g
    -- of the piece is output octet g + r, r = (dlo - s) mod N; the payload's
    -- output octets run from gs = s + r (gs = dlo mod N) to end = gs +
    -- remain - 1. Fields: r; m0 = gs / N, the output beat of the first
    -- payload octet; ylo = end mod N, the last payload octet's lane; left =
    -- (dlo + remain + N - 1) / N, the output beats the payload takes; q1 =
    -- m1 - 2, m1 = end / N the output beat of the last payload octet (-1 for
    -- no payload), as a 20-bit two's complement count. gs is at most 31 + N
    -- - 1, so m0 at most 4. The two sums are fadd trees; q1 = (remain + gs -
    -- 1 - 2N) >> LG, arithmetic, in one sum.
    function pl_setup(dlo : lane_t; s : u5_t; remain : u16_t) return su_t;

    -- Big-endian field of 4 octets starting at octet o of the header (RFC
    -- 5041 4: octet 0 in lane 0).
    function be32(h : hdr_t; o : natural) return u32_t;

    -- Octets in a tkeep that is a run from lane 0: the run's last lane b
    -- (lane b kept, lane b + 1 not) gives b + 1, each bit of the count an OR
    -- over the lanes whose b + 1 has it set (no priority search: see the
    -- Verilog).
    function keep_count(k : keep_t) return unsigned;

    function expand(m : keep_t) return data_t;

    -- Queue qn of a check context's queues.
    function cx_q(cx : qs_t; qn : std_ulogic_vector(1 downto 0)) return q_t;

    -- Queue state after popping the head (a delivered untagged message): a
    -- pop is of the oldest MSN (the checks allow no other), so the new head
    -- is the message's MSN + 1 (msn1, worked out at C1), and C2 needs no sum.
    function q_pop(cnt : qcnt_t; msn1 : u32_t) return q_t;

    -- Lanes of output beat m that are in the window [m0*N + lo, m1*N + hi],
    -- from flags of q0 = m0 - m and q1 = m1 - m: q0 = 0, q0 > 0, q1 = 0,
    -- q1 < 0; lo_m = lanes >= lo, hi_m = lanes <= hi.
    function win_flags(q0z : std_ulogic; q0p : std_ulogic; q1z : std_ulogic; q1n : std_ulogic;
                       lo_m : keep_t; hi_m : keep_t) return keep_t;

    -- The same from q0 and q1 themselves (20-bit two's complement).
    function win_mask(q0 : u20_t; q1 : u20_t; lo_m : keep_t; hi_m : keep_t) return keep_t;

    -- Octets 18..45 of a first piece from its input beat k.
    function rr_capture(rr : rr_t; beat : data_t; k : u13_t) return rr_t;

    function sel(c : std_ulogic; a : std_ulogic; b : std_ulogic) return std_ulogic;

    function ci(c : conn_t) return natural;

    -- Checks on the STag entry and the posted buffer just read, over two
    -- clocks, C1 and C1b, each at most 5 LUT levels: every sum of 16 bits
    -- or more is split in 8-bit chunks (sum72a at C1, sum72b at C1b,
    -- through the b_*_a registers), and every comparison of a sum is the
    -- sign of one (bit 71 of a 72-bit sum, operands one's complemented to
    -- 72 bits) or an equality found without a carry chain (sumeq). What the
    -- decision needs:
    --   bounds:  TO < base, or TO + n > base + len (as integers: the same
    --            as TO - base outside 0 .. 2**32-1 or off + n > len, 7.1);
    --   address: addr + TO - base (tagged), addr + MO (untagged);
    --   MO + n:  the message length, its check against the buffer and 28;
    --   d_j:     MSN - first - j for j = 0..3 (the window checks): whether
    --            its bits above RQ_AW are zero, its low bits, its sign,
    --            whether it is zero.
    constant LQ_c : positive := RQ_AW + 1;          -- low bits of d_j that the window check compares
    constant MASK32_c : u72_t := resize(unsigned'(x"ffffffff"), 72);
    constant MASK_HI_c : u72_t := shift_right(MASK32_c, LQ_c);   -- d_j's bits LQ..31, shifted down
    subtype sg4_t is unsigned(4 * 162 - 1 downto 0);
    subtype low4_t is unsigned(4 * LQ_c - 1 downto 0);
    subtype cm4_t is unsigned(4 * (LQ_c + 1) - 1 downto 0);

    -- herr_reg's bit for C2's piece, looked up over two clocks as the piece
    -- moves up (a group of 2**HG bits at C1b, then the bit), with what is
    -- set meanwhile. (No bit is cleared while a piece is in the pipeline:
    -- configuration waits for it to empty.)
    constant HG_c : natural := imin(CONN_W, 4);
    constant NHG_c : positive := 2 ** HG_c;
    constant HG_MASK_c : conn_t := std_ulogic_vector(to_unsigned(NHG_c - 1, CONN_W));
    subtype hgrp_t is std_ulogic_vector(NHG_c - 1 downto 0);

    function herr_group(h : std_ulogic_vector(NCONN_c - 1 downto 0); c : conn_t) return hgrp_t;

    function herr_bit(g : hgrp_t; c : conn_t) return std_ulogic;

    -- The bits of c's group set at this edge (set, at set_conn).
    function herr_group_set(c : conn_t; set : std_ulogic; set_conn : conn_t) return hgrp_t;

    -- The clear of the tables after reset (ddp_rx_tables.v).
    constant CLR_AW_c : positive := CONN_W + STAG_AW - imin(CONN_W, STAG_AW);   -- the larger
end package ddp_rx_cfg_pkg;

package body ddp_rx_cfg_pkg is
    function pl_setup(dlo : lane_t; s : u5_t; remain : u16_t) return su_t is
        variable s8 : u8_t;
        variable gs : unsigned(9 downto 0);
        variable r, ylo : lane_t;
        variable yq, q1 : u20_t;
        variable sl, sq : u33_t;              -- (only some bits of the sums are wanted)
    begin
        s8 := resize(s, 8);
        r := dlo - s8(LG_c - 1 downto 0);
        gs := resize(s8, 10) + resize(r, 10);
        ylo := dlo + remain(LG_c - 1 downto 0) - 1;
        sl := fadd(resize(remain, 32), resize(dlo, 32) + KEEP_W_c - 1, '0');
        yq := resize(gs, 20) - 1 - resize(N18_c(16 downto 0) & '0', 20);
        sq := fadd(resize(remain, 32), resize(yq, 32), '0');
        q1 := unsigned(shift_right(signed(sq(19 downto 0)), LG_c));
        if remain = 0 then
            q1 := x"ffffd";                   -- m1 = -1
        end if;
        return std_ulogic_vector(r & gs(LG_c + 2 downto LG_c) & ylo & sl(LG_c + 17 downto LG_c) & q1);
    end function pl_setup;

    function be32(h : hdr_t; o : natural) return u32_t is
    begin
        return unsigned(h(8 * o + 7 downto 8 * o)) & unsigned(h(8 * o + 15 downto 8 * o + 8))
            & unsigned(h(8 * o + 23 downto 8 * o + 16)) & unsigned(h(8 * o + 31 downto 8 * o + 24));
    end function be32;

    function keep_count(k : keep_t) return unsigned is
        variable e : std_ulogic_vector(KEEP_W_c downto 0);
        variable c : unsigned(LG_c downto 0);
    begin
        e := ('0' & k) and not ("00" & k(KEEP_W_c - 1 downto 1));   -- e(b): lane b is the run's last
        c := (others => '0');
        for b in 0 to KEEP_W_c - 1 loop
            c := c or (to_unsigned(b + 1, LG_c + 1) and (LG_c downto 0 => e(b)));
        end loop;
        return c;
    end function keep_count;

    function expand(m : keep_t) return data_t is
        variable d : data_t;
    begin
        for b in 0 to KEEP_W_c - 1 loop
            d(8 * b + 7 downto 8 * b) := (others => m(b));
        end loop;
        return d;
    end function expand;

    function cx_q(cx : qs_t; qn : std_ulogic_vector(1 downto 0)) return q_t is
    begin
        case qn is
            when "01" => return cx(2 * Q_W_c - 1 downto Q_W_c);
            when "10" => return cx(3 * Q_W_c - 1 downto 2 * Q_W_c);
            when others => return cx(Q_W_c - 1 downto 0);
        end case;
    end function cx_q;

    function q_pop(cnt : qcnt_t; msn1 : u32_t) return q_t is
    begin
        return std_ulogic_vector(msn1) & std_ulogic_vector(cnt - 1);
    end function q_pop;

    function win_flags(q0z : std_ulogic; q0p : std_ulogic; q1z : std_ulogic; q1n : std_ulogic;
                       lo_m : keep_t; hi_m : keep_t) return keep_t is
        variable r : keep_t;
    begin
        if q0p = '1' or q1n = '1' then
            return (KEEP_W_c - 1 downto 0 => '0');
        end if;
        r := (others => '1');
        if q0z = '1' then
            r := lo_m;
        end if;
        if q1z = '1' then
            r := r and hi_m;
        end if;
        return r;
    end function win_flags;

    function win_mask(q0 : u20_t; q1 : u20_t; lo_m : keep_t; hi_m : keep_t) return keep_t is
    begin
        return win_flags(to_sl(q0 = 0), to_sl(q0(19) = '0' and q0 /= 0), to_sl(q1 = 0), q1(19), lo_m, hi_m);
    end function win_mask;

    function rr_capture(rr : rr_t; beat : data_t; k : u13_t) return rr_t is
        variable r : rr_t;
    begin
        r := rr;
        for j in 0 to 27 loop
            -- (k counts the beats queued: at W=64 beat 0, all header, was not.)
            if to_integer(k) = (18 + j) / KEEP_W_c - DROP0_c then
                r(8 * j + 7 downto 8 * j) := beat(8 * ((18 + j) mod KEEP_W_c) + 7 downto 8 * ((18 + j) mod KEEP_W_c));
            end if;
        end loop;
        return r;
    end function rr_capture;

    function sel(c : std_ulogic; a : std_ulogic; b : std_ulogic) return std_ulogic is
    begin
        if c = '1' then
            return a;
        end if;
        return b;
    end function sel;

    function ci(c : conn_t) return natural is
    begin
        return to_integer(unsigned(c));
    end function ci;

    function herr_group(h : std_ulogic_vector(NCONN_c - 1 downto 0); c : conn_t) return hgrp_t is
        variable base : natural;
    begin
        base := ci(c and not HG_MASK_c);
        return h(base + NHG_c - 1 downto base);
    end function herr_group;

    function herr_bit(g : hgrp_t; c : conn_t) return std_ulogic is
    begin
        return g(ci(c and HG_MASK_c));
    end function herr_bit;

    function herr_group_set(c : conn_t; set : std_ulogic; set_conn : conn_t) return hgrp_t is
        variable r : hgrp_t;
    begin
        r := (others => '0');
        if set = '1' and shift_right(unsigned(set_conn), HG_c) = shift_right(unsigned(c), HG_c) then
            r(ci(set_conn and HG_MASK_c)) := '1';
        end if;
        return r;
    end function herr_group_set;
end package body ddp_rx_cfg_pkg;
