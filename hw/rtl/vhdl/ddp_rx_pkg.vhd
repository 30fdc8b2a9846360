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
    -- Placement set-up of a piece (SU, pl_setup).
    function su_w(data_w : natural) return positive;
    -- Placement descriptor of a piece (DC).
    function dc_w(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return positive;
    -- --- records ----------------------------------------------------------------
    --
    -- The records that pass between the stages or sit in a queue or a table,
    -- field by field (ddp_rx_defs.vh has the same records as offsets into a
    -- vector). The fields whose width is a generic's are unconstrained here;
    -- a stage constrains them (subtype hf_t is hf_r(conn(CONN_W - 1 downto
    -- 0)), ...) in its architecture and in its ports. A queue or a table
    -- stores a record as a vector: to_slv packs it, fields in the order
    -- below from the top bit down, and to_<record>(v, widths) unpacks it.

    -- REC, the delivery record of a ULPDU: what V0 reports for it.
    type rec_r is record
        kind     : unsigned(1 downto 0);           -- K_*
        opcode   : std_ulogic_vector(3 downto 0);
        tagged   : std_ulogic;
        qn       : std_ulogic_vector(1 downto 0);
        msn      : std_ulogic_vector(31 downto 0);
        len      : std_ulogic_vector(31 downto 0); -- the message length (untagged)
        id       : std_ulogic_vector;              -- ID_W: the posted buffer's
        stag     : std_ulogic_vector(31 downto 0); -- a tagged record's STag
        inv_stag : std_ulogic_vector(31 downto 0);
        err      : std_ulogic_vector(15 downto 0); -- layer & etype & code (an ERR_* word)
    end record rec_r;

    -- CX, the check context of a connection.
    type cx_r is record
        en   : std_ulogic;                         -- the connection is enabled
        pd   : std_ulogic_vector(31 downto 0);
        fail : std_ulogic;                         -- its stream has failed
        qs   : std_ulogic_vector;                  -- 3 * Q_W: q2 & q1 & q0, each first MSN & count
    end record cx_r;

    -- DX, the placement context of a connection, between the pieces of a ULPDU.
    type dx_r is record
        place  : std_ulogic;
        nxt    : unsigned;                         -- ADDR_W: where the next piece's payload goes
        remain : unsigned(15 downto 0);            -- payload octets to the end of the ULPDU
        rec    : rec_r;
        rr     : std_ulogic_vector(223 downto 0);  -- octets 18..45 of the first piece
    end record dx_r;

    -- RF, a delivery record queued for V0 (rec_fifo).
    type rf_r is record
        en   : std_ulogic;                         -- the connection was enabled
        mark : unsigned;                           -- MK_W: bursts queued before it (see b_hold)
        conn : std_ulogic_vector;                  -- CONN_W
        rec  : rec_r;
        rr   : std_ulogic_vector(223 downto 0);
    end record rf_r;

    -- HF, the header record of a piece (hf_fifo).
    type hf_r is record
        drop  : std_ulogic;                        -- its beat 0 was not queued for placement (W=64)
        early : std_ulogic;
        short : std_ulogic;                        -- ulen < header length
        n     : unsigned(15 downto 0);             -- ulen - header length
        ulen  : std_ulogic_vector(15 downto 0);
        conn  : std_ulogic_vector;                 -- CONN_W
        first : std_ulogic;
        hdr   : std_ulogic_vector(143 downto 0);   -- octets 0..17
    end record hf_r;

    -- DF, an input beat (df_fifo).
    type df_r is record
        data  : std_ulogic_vector;                 -- DATA_W
        keep  : std_ulogic_vector;                 -- DATA_W / 8
        tlast : std_ulogic;
        ulast : std_ulogic;                        -- the ULPDU's last beat
    end record df_r;

    -- DC, the placement descriptor of a piece (dc_fifo).
    type dc_r is record
        early  : std_ulogic;
        conn   : std_ulogic_vector;                -- CONN_W
        first  : std_ulogic;
        en     : std_ulogic;
        place  : std_ulogic;
        dest   : unsigned;                         -- ADDR_W
        s      : unsigned(4 downto 0);             -- the payload's first octet in the piece
        remain : unsigned(15 downto 0);
        rec    : rec_r;
        su     : std_ulogic_vector;                -- SU_W: pl_setup's result
    end record dc_r;

    -- C1B, what C1b hands C2 (ddp_rx_check to ddp_rx_decide, beside
    -- b_valid_reg): the piece's fields and the checks' first results,
    -- registered at C1b (the Verilog's b_<field>_reg), and the sums' second
    -- clock (bs_<field>). ddp_rx_check.v has what each one is.
    type c1b_r is record
        conn      : std_ulogic_vector;             -- CONN_W
        first     : std_ulogic;
        early     : std_ulogic;
        cx        : cx_r;
        t         : std_ulogic;
        l         : std_ulogic;
        op        : unsigned(3 downto 0);
        stag      : unsigned(31 downto 0);
        msn       : unsigned(31 downto 0);
        msn1      : unsigned(31 downto 0);
        qn        : unsigned(1 downto 0);
        n         : unsigned(15 downto 0);
        hlen      : unsigned(4 downto 0);
        cerr      : std_ulogic;
        cerr_code : std_ulogic_vector(15 downto 0);
        stag_bad  : std_ulogic;
        assoc_bad : std_ulogic;
        acc       : std_ulogic;
        wrap      : std_ulogic;
        mo_gt     : std_ulogic;
        rr_eq     : std_ulogic;
        z         : std_ulogic_vector(3 downto 0);
        id        : std_ulogic_vector;             -- ID_W
        st        : std_ulogic_vector;             -- the STag entry but its valid bit
        lt        : unsigned(72 downto 0);
        gt        : unsigned(72 downto 0);
        dt        : unsigned(72 downto 0);
        du        : unsigned(72 downto 0);
        mon       : unsigned(72 downto 0);
        long      : unsigned(72 downto 0);
        nobuf     : std_ulogic_vector(3 downto 0);
        behind    : std_ulogic_vector(3 downto 0);
    end record c1b_r;

    -- D0, a piece's placement set-up (ddp_rx_setup to ddp_rx_place, beside
    -- d0_valid_reg): the Verilog's d0_<field>_reg.
    type d0_r is record
        first  : std_ulogic;
        en     : std_ulogic;
        place  : std_ulogic;
        early  : std_ulogic;
        conn   : std_ulogic_vector;                -- CONN_W
        dest   : unsigned;                         -- ADDR_W
        s      : unsigned(4 downto 0);
        remain : unsigned(15 downto 0);
        rec    : rec_r;
        rr     : std_ulogic_vector(223 downto 0);
        r      : unsigned;                         -- LG: the rotation
        win0   : std_ulogic_vector;                -- KEEP_W each: the window's masks
        win1   : std_ulogic_vector;
        lo     : std_ulogic_vector;
        hi     : std_ulogic_vector;
        q0     : unsigned(19 downto 0);
        q1     : unsigned(19 downto 0);
        left   : unsigned(17 downto 0);
        waddr  : unsigned;                         -- ADDR_W
        bofs   : unsigned;                         -- BW
        wst    : std_ulogic;
    end record d0_r;

    -- A piece's end (ddp_rx_place's D1 to ddp_rx_retire's D2, beside
    -- d_end_w): the Verilog's d_end_last, d_<field>_reg, d_octs, d_rr_step.
    type pe_r is record
        last   : std_ulogic;                       -- the piece ends its ULPDU
        en     : std_ulogic;
        early  : std_ulogic;
        place  : std_ulogic;
        conn   : std_ulogic_vector;                -- CONN_W
        dest   : unsigned;                         -- ADDR_W
        s      : unsigned(4 downto 0);
        octs   : unsigned(16 downto 0);            -- octets of the piece
        remain : unsigned(15 downto 0);
        rec    : rec_r;
        rr     : std_ulogic_vector(223 downto 0);  -- the Read Request's body, as captured
    end record pe_r;

    function to_slv(r : rec_r) return std_ulogic_vector;
    function to_slv(r : cx_r) return std_ulogic_vector;
    function to_slv(r : dx_r) return std_ulogic_vector;
    function to_slv(r : rf_r) return std_ulogic_vector;
    function to_slv(r : hf_r) return std_ulogic_vector;
    function to_slv(r : df_r) return std_ulogic_vector;
    function to_slv(r : dc_r) return std_ulogic_vector;
    function to_rec(v : std_ulogic_vector; id_w : natural) return rec_r;
    function to_cx(v : std_ulogic_vector; rq_aw : natural) return cx_r;
    function to_dx(v : std_ulogic_vector; addr_w : natural; id_w : natural) return dx_r;
    function to_rf(v : std_ulogic_vector; conn_w : natural; id_w : natural; bq_aw : natural) return rf_r;
    function to_hf(v : std_ulogic_vector; conn_w : natural) return hf_r;
    function to_df(v : std_ulogic_vector; data_w : natural) return df_r;
    function to_dc(v : std_ulogic_vector; data_w : natural; conn_w : natural; addr_w : natural;
                   id_w : natural) return dc_r;
    -- The records with every bit zero (initial values).
    function rec_zero(id_w : natural) return rec_r;
    function c1b_zero(conn_w : natural; rq_aw : natural; id_w : natural; st_w1 : natural) return c1b_r;
    function d0_zero(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural; bw : natural) return d0_r;
    function cx_zero(rq_aw : natural) return cx_r;
    function dx_zero(addr_w : natural; id_w : natural) return dx_r;
    function rf_zero(conn_w : natural; id_w : natural; bq_aw : natural) return rf_r;
    function hf_zero(conn_w : natural) return hf_r;
    function df_zero(data_w : natural) return df_r;
    function dc_zero(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return dc_r;
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

    function su_w(data_w : natural) return positive is
        constant lg : natural := clog2(data_w / 8);
    begin
        return lg + 3 + lg + 18 + 20;
    end function su_w;

    function dc_w(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return positive is
    begin
        return 1 + conn_w + 3 + addr_w + 5 + 16 + recc_w(id_w) + su_w(data_w);
    end function dc_w;

    -- --- records ----------------------------------------------------------------

    function to_slv(r : rec_r) return std_ulogic_vector is
    begin
        return std_ulogic_vector(r.kind) & r.opcode & r.tagged & r.qn & r.msn & r.len & r.id & r.stag
               & r.inv_stag & r.err;
    end function to_slv;

    function to_slv(r : cx_r) return std_ulogic_vector is
    begin
        return r.en & r.pd & r.fail & r.qs;
    end function to_slv;

    function to_slv(r : dx_r) return std_ulogic_vector is
    begin
        return r.place & std_ulogic_vector(r.nxt) & std_ulogic_vector(r.remain) & to_slv(r.rec) & r.rr;
    end function to_slv;

    function to_slv(r : rf_r) return std_ulogic_vector is
    begin
        return r.en & std_ulogic_vector(r.mark) & r.conn & to_slv(r.rec) & r.rr;
    end function to_slv;

    function to_slv(r : hf_r) return std_ulogic_vector is
    begin
        return r.drop & r.early & r.short & std_ulogic_vector(r.n) & r.ulen & r.conn & r.first & r.hdr;
    end function to_slv;

    function to_slv(r : df_r) return std_ulogic_vector is
    begin
        return r.data & r.keep & r.tlast & r.ulast;
    end function to_slv;

    function to_slv(r : dc_r) return std_ulogic_vector is
    begin
        return r.early & r.conn & r.first & r.en & r.place & std_ulogic_vector(r.dest) & std_ulogic_vector(r.s)
               & std_ulogic_vector(r.remain) & to_slv(r.rec) & r.su;
    end function to_slv;

    -- The unpacking functions take the fields from the bottom bit up.

    function to_rec(v : std_ulogic_vector; id_w : natural) return rec_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        variable r : rec_r(id(id_w - 1 downto 0));
    begin
        r.err := x(15 downto 0);
        r.inv_stag := x(47 downto 16);
        r.stag := x(79 downto 48);
        r.id := x(id_w + 79 downto 80);
        r.len := x(id_w + 111 downto id_w + 80);
        r.msn := x(id_w + 143 downto id_w + 112);
        r.qn := x(id_w + 145 downto id_w + 144);
        r.tagged := x(id_w + 146);
        r.opcode := x(id_w + 150 downto id_w + 147);
        r.kind := unsigned(x(id_w + 152 downto id_w + 151));
        return r;
    end function to_rec;

    function to_cx(v : std_ulogic_vector; rq_aw : natural) return cx_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        constant qs_w : natural := 3 * (32 + rq_aw + 1);
        variable r : cx_r(qs(qs_w - 1 downto 0));
    begin
        r.qs := x(qs_w - 1 downto 0);
        r.fail := x(qs_w);
        r.pd := x(qs_w + 32 downto qs_w + 1);
        r.en := x(qs_w + 33);
        return r;
    end function to_cx;

    function to_dx(v : std_ulogic_vector; addr_w : natural; id_w : natural) return dx_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        constant rw : natural := recc_w(id_w);
        variable r : dx_r(nxt(addr_w - 1 downto 0), rec(id(id_w - 1 downto 0)));
    begin
        r.rr := x(223 downto 0);
        r.rec := to_rec(x(rw + 223 downto 224), id_w);
        r.remain := unsigned(x(rw + 239 downto rw + 224));
        r.nxt := unsigned(x(rw + 239 + addr_w downto rw + 240));
        r.place := x(rw + 240 + addr_w);
        return r;
    end function to_dx;

    function to_rf(v : std_ulogic_vector; conn_w : natural; id_w : natural; bq_aw : natural) return rf_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        constant rw : natural := recc_w(id_w);
        variable r : rf_r(mark(bq_aw + 2 downto 0), conn(conn_w - 1 downto 0), rec(id(id_w - 1 downto 0)));
    begin
        r.rr := x(223 downto 0);
        r.rec := to_rec(x(rw + 223 downto 224), id_w);
        r.conn := x(rw + 223 + conn_w downto rw + 224);
        r.mark := unsigned(x(rw + 226 + conn_w + bq_aw downto rw + 224 + conn_w));
        r.en := x(rw + 227 + conn_w + bq_aw);
        return r;
    end function to_rf;

    function to_hf(v : std_ulogic_vector; conn_w : natural) return hf_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        variable r : hf_r(conn(conn_w - 1 downto 0));
    begin
        r.hdr := x(143 downto 0);
        r.first := x(144);
        r.conn := x(144 + conn_w downto 145);
        r.ulen := x(160 + conn_w downto 145 + conn_w);
        r.n := unsigned(x(176 + conn_w downto 161 + conn_w));
        r.short := x(177 + conn_w);
        r.early := x(178 + conn_w);
        r.drop := x(179 + conn_w);
        return r;
    end function to_hf;

    function to_df(v : std_ulogic_vector; data_w : natural) return df_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        variable r : df_r(data(data_w - 1 downto 0), keep(data_w / 8 - 1 downto 0));
    begin
        r.ulast := x(0);
        r.tlast := x(1);
        r.keep := x(data_w / 8 + 1 downto 2);
        r.data := x(data_w + data_w / 8 + 1 downto data_w / 8 + 2);
        return r;
    end function to_df;

    function to_dc(v : std_ulogic_vector; data_w : natural; conn_w : natural; addr_w : natural;
                   id_w : natural) return dc_r is
        constant x : std_ulogic_vector(v'length - 1 downto 0) := v;
        constant sw : natural := su_w(data_w);
        constant rw : natural := recc_w(id_w);
        variable r : dc_r(conn(conn_w - 1 downto 0), dest(addr_w - 1 downto 0), rec(id(id_w - 1 downto 0)),
                          su(sw - 1 downto 0));
        variable p : natural;
    begin
        r.su := x(sw - 1 downto 0);
        p := sw;
        r.rec := to_rec(x(p + rw - 1 downto p), id_w);
        p := p + rw;
        r.remain := unsigned(x(p + 15 downto p));
        r.s := unsigned(x(p + 20 downto p + 16));
        p := p + 21;
        r.dest := unsigned(x(p + addr_w - 1 downto p));
        p := p + addr_w;
        r.place := x(p);
        r.en := x(p + 1);
        r.first := x(p + 2);
        r.conn := x(p + conn_w + 2 downto p + 3);
        r.early := x(p + conn_w + 3);
        return r;
    end function to_dc;
    function rec_zero(id_w : natural) return rec_r is
    begin
        return to_rec((recc_w(id_w) - 1 downto 0 => '0'), id_w);
    end function rec_zero;

    function cx_zero(rq_aw : natural) return cx_r is
    begin
        return to_cx((cx_w(rq_aw) - 1 downto 0 => '0'), rq_aw);
    end function cx_zero;

    function dx_zero(addr_w : natural; id_w : natural) return dx_r is
    begin
        return to_dx((dx_w(addr_w, id_w) - 1 downto 0 => '0'), addr_w, id_w);
    end function dx_zero;

    function rf_zero(conn_w : natural; id_w : natural; bq_aw : natural) return rf_r is
    begin
        return to_rf((rf_w(conn_w, id_w, bq_aw) - 1 downto 0 => '0'), conn_w, id_w, bq_aw);
    end function rf_zero;

    function hf_zero(conn_w : natural) return hf_r is
    begin
        return to_hf((hf_w(conn_w) - 1 downto 0 => '0'), conn_w);
    end function hf_zero;

    function df_zero(data_w : natural) return df_r is
    begin
        return to_df((df_w(data_w) - 1 downto 0 => '0'), data_w);
    end function df_zero;

    function dc_zero(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural) return dc_r is
    begin
        return to_dc((dc_w(data_w, conn_w, addr_w, id_w) - 1 downto 0 => '0'), data_w, conn_w, addr_w, id_w);
    end function dc_zero;

    function c1b_zero(conn_w : natural; rq_aw : natural; id_w : natural; st_w1 : natural) return c1b_r is
        variable r : c1b_r(conn(conn_w - 1 downto 0), cx(qs(3 * (32 + rq_aw + 1) - 1 downto 0)), id(id_w - 1 downto 0),
                           st(st_w1 - 1 downto 0));
    begin
        r.conn := (others => '0');
        r.first := '0';
        r.early := '0';
        r.cx := cx_zero(rq_aw);
        r.t := '0';
        r.l := '0';
        r.op := (others => '0');
        r.stag := (others => '0');
        r.msn := (others => '0');
        r.msn1 := (others => '0');
        r.qn := (others => '0');
        r.n := (others => '0');
        r.hlen := (others => '0');
        r.cerr := '0';
        r.cerr_code := (others => '0');
        r.stag_bad := '0';
        r.assoc_bad := '0';
        r.acc := '0';
        r.wrap := '0';
        r.mo_gt := '0';
        r.rr_eq := '0';
        r.z := (others => '0');
        r.id := (others => '0');
        r.st := (others => '0');
        r.lt := (others => '0');
        r.gt := (others => '0');
        r.dt := (others => '0');
        r.du := (others => '0');
        r.mon := (others => '0');
        r.long := (others => '0');
        r.nobuf := (others => '0');
        r.behind := (others => '0');
        return r;
    end function c1b_zero;

    function d0_zero(data_w : natural; conn_w : natural; addr_w : natural; id_w : natural; bw : natural) return d0_r is
        constant n : natural := data_w / 8;
        variable r : d0_r(conn(conn_w - 1 downto 0), dest(addr_w - 1 downto 0), rec(id(id_w - 1 downto 0)),
                          r(clog2(n) - 1 downto 0), win0(n - 1 downto 0), win1(n - 1 downto 0), lo(n - 1 downto 0),
                          hi(n - 1 downto 0), waddr(addr_w - 1 downto 0), bofs(bw - 1 downto 0));
    begin
        r.first := '0';
        r.en := '0';
        r.place := '0';
        r.early := '0';
        r.conn := (others => '0');
        r.dest := (others => '0');
        r.s := (others => '0');
        r.remain := (others => '0');
        r.rec := rec_zero(id_w);
        r.rr := (others => '0');
        r.r := (others => '0');
        r.win0 := (others => '0');
        r.win1 := (others => '0');
        r.lo := (others => '0');
        r.hi := (others => '0');
        r.q0 := (others => '0');
        r.q1 := (others => '0');
        r.left := (others => '0');
        r.waddr := (others => '0');
        r.bofs := (others => '0');
        r.wst := '0';
        return r;
    end function d0_zero;

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
    subtype rr_t is std_ulogic_vector(223 downto 0);
    subtype hdr_t is std_ulogic_vector(143 downto 0);
    subtype q_t is std_ulogic_vector(Q_W_c - 1 downto 0);
    subtype qs_t is std_ulogic_vector(3 * Q_W_c - 1 downto 0);
    subtype qcnt_t is unsigned(RQ_AW downto 0);
    subtype st_t is std_ulogic_vector(ST_W_c - 1 downto 0);
    subtype rg_t is std_ulogic_vector(RG_W_c - 1 downto 0);
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
