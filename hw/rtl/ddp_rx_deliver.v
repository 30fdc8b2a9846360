// ddp_rx_deliver: stage V0 of ddp_rx, delivery, and the status pulses
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// V0: delivery records (rec_fifo's head, from ddp_rx_wport), in the order
// of last pieces, meet their verdicts (s_verdict) and their bursts' B
// responses (b_cnt against the record's mark); the oldest record's
// connection's dead and herr bits are looked up as it comes in. A record
// is delivered as a completion (m_cpl) or error (m_err: its ERR_* word,
// ERR_RDMAP_LOCAL_CATASTROPHIC after an error B response, or LAYER_LLP /
// ETYPE_MPA with the MPA code of a bad verdict). Keeps herr (connections
// with an error B response: herr_set, herr_set_conn to the checks and
// placement) and dead (streams ended). B responses: BREADY (b_hold) and
// the error bits. Status pulses: m_drop, m_post_err, m_berr, m_done, one
// clock each.
//
// Cycle behaviour: a record's delivery takes its verdict the clock both
// are there and its bursts are answered; m_cpl/m_err are registered.
//
// A restart (s_conn, cf_conn) ends the connection's old stream: every
// report on the connection after the handshake is the new stream's (m_cpl
// and m_err carry no stream generation). At the handshake the pipeline is
// empty and every burst answered (ddp_rx_tables' fence), so the old
// stream's undelivered ULPDUs are all records in rec_fifo or V0; rq_cnt
// counts those records (pushed, not yet delivered), and the restart keeps
// their number (rs_left) and the connection (rs_conn). The next rs_left
// deliveries are those records, in order (one FIFO): each of them of
// rs_conn is stale: it takes its verdict as any record, but reports
// nothing and sets no dead bit. A record delivered in the handshake's own
// clock is stale too (its report would come out after the handshake). The
// error bits need nothing more: the old stream's B responses are all in
// before the handshake, which clears its herr and dead bits. Exact: the
// records of rs_conn among those queued at the handshake are exactly the
// old stream's undelivered ULPDUs (no placement, no push, in that clock),
// and no record pushed after it is among the next rs_left deliveries, so
// nothing of the new stream is taken for stale and nothing of the old one
// is reported. One restart at a time: rs_busy (rs_left != 0) holds
// s_conn_ready low until that many records are delivered; that waits for
// verdicts of ULPDUs already taken in, as the fence's B responses do
// (ddp_rx_tables), and is the rare case of two restarts within one
// record queue's worth of undelivered ULPDUs.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_deliver #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4,
    parameter REC_AW = 3,
    parameter WR_REQ = 0
) (
    clk,
    rst,
    s_verdict_tdata,
    s_verdict_tvalid,
    s_conn_conn,
    m_cpl_ready,
    m_err_ready,
    cx_rd_data,
    cf_post_reg,
    c2_conn_reg,
    c2_first_reg,
    c2_early_reg,
    c_en,
    c2_go,
    b_valid,
    b_resp,
    rf_in_ready,
    rf_out_data,
    rf_out_valid,
    bq_out_data,
    bq_out_valid,
    b_cnt_reg,
    b_cnt1_reg,
    d2_valid_reg,
    e2_last_reg,
    e2_early_reg,
    e2_conn_reg,
    cf_conn,
    o_conn_reg,
    o_qn_reg,
    o_ent_reg,
    o_ok,
    s_verdict_tready,
    m_axi_bready,
    m_cpl_valid,
    m_cpl_conn,
    m_cpl_opcode,
    m_cpl_tagged,
    m_cpl_qn,
    m_cpl_msn,
    m_cpl_len,
    m_cpl_id,
    m_cpl_stag,
    m_cpl_inv_stag,
    m_cpl_rr,
    m_err_valid,
    m_err_conn,
    m_err_layer,
    m_err_etype,
    m_err_code,
    m_drop_valid,
    m_drop_conn,
    m_drop_reason,
    m_drop_first,
    m_drop_count,
    m_post_err_valid,
    m_post_err_conn,
    m_post_err_qn,
    m_post_err_id,
    m_post_err_reason,
    m_berr_valid,
    m_berr_conn,
    m_berr_resp,
    m_done_valid,
    m_done_conn,
    herr_reg,
    herr_set,
    herr_set_conn,
    rf_out_ready,
    b_go,
    rs_busy,
    te_rd_en,
    te_rd_conn,
    te_own
);
reg [NCONN-1:0] herr_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [2:0]                  s_verdict_tdata;
input  wire                        s_verdict_tvalid;
input  wire [CONN_W-1:0]           s_conn_conn;
input  wire                        m_cpl_ready;
input  wire                        m_err_ready;
input  wire [CX_W-1:0]             cx_rd_data;
input  wire                        cf_post_reg;
input  wire [CONN_W-1:0]           c2_conn_reg;
input  wire                        c2_first_reg;
input  wire                        c2_early_reg;
input  wire                        c_en;
input  wire                        c2_go;
input  wire                        b_valid;
input  wire [1:0]                  b_resp;
input  wire                        rf_in_ready;
input  wire [RF_W-1:0]             rf_out_data;
input  wire                        rf_out_valid;
input  wire [CONN_W-1:0]           bq_out_data;
input  wire                        bq_out_valid;
input  wire [MK_W-1:0]             b_cnt_reg;
input  wire [MK_W-1:0]             b_cnt1_reg;
input  wire                        d2_valid_reg;
input  wire                        e2_last_reg;
input  wire                        e2_early_reg;
input  wire [CONN_W-1:0]           e2_conn_reg;
input  wire                        cf_conn;
input  wire [CONN_W-1:0]           o_conn_reg;
input  wire [1:0]                  o_qn_reg;
input  wire [RG_W-1:0]             o_ent_reg;
input  wire                        o_ok;
output wire                        s_verdict_tready;
output wire                        m_axi_bready;
output wire                        m_cpl_valid;
output wire [CONN_W-1:0]           m_cpl_conn;
output wire [3:0]                  m_cpl_opcode;
output wire                        m_cpl_tagged;
output wire [1:0]                  m_cpl_qn;
output wire [31:0]                 m_cpl_msn;
output wire [31:0]                 m_cpl_len;
output wire [ID_W-1:0]             m_cpl_id;
output wire [31:0]                 m_cpl_stag;
output wire [31:0]                 m_cpl_inv_stag;
output wire [223:0]                m_cpl_rr;
output wire                        m_err_valid;
output wire [CONN_W-1:0]           m_err_conn;
output wire [3:0]                  m_err_layer;
output wire [3:0]                  m_err_etype;
output wire [7:0]                  m_err_code;
output wire                        m_drop_valid;
output wire [CONN_W-1:0]           m_drop_conn;
output wire [1:0]                  m_drop_reason;
output wire                        m_drop_first;
output wire [31:0]                 m_drop_count;
output wire                        m_post_err_valid;
output wire [CONN_W-1:0]           m_post_err_conn;
output wire [1:0]                  m_post_err_qn;
output wire [ID_W-1:0]             m_post_err_id;
output wire [1:0]                  m_post_err_reason;
output wire                        m_berr_valid;
output wire [CONN_W-1:0]           m_berr_conn;
output wire [1:0]                  m_berr_resp;
output wire                        m_done_valid;
output wire [CONN_W-1:0]           m_done_conn;
output reg  [NCONN-1:0]            herr_reg = {NCONN{1'b0}};
output wire                        herr_set;
output wire [CONN_W-1:0]           herr_set_conn;
output wire                        rf_out_ready;
output wire                        b_go;
output wire                        rs_busy;
// ddp_rx's te_ram read (the Terminate's copied header, ddp_rx.v): at each
// delivery (te_rd_en), the record's connection, and te_own: the report is
// the record's own error (not a bad verdict's, not an error B response's).
output wire                        te_rd_en;
output wire [CONN_W-1:0]           te_rd_conn;
output wire                        te_own;

reg [NCONN-1:0]        dead_reg = {NCONN{1'b0}}, dead_next;

// --- delivery: records and verdicts, in the order of last pieces ------------

reg                    cpl_valid_reg = 1'b0, cpl_valid_next;
reg                    err_valid_reg = 1'b0, err_valid_next;
reg [CONN_W-1:0]       ev_conn_reg, ev_conn_next;
reg [RECC_W-1:0]       ev_rec_reg, ev_rec_next;
reg [223:0]            ev_rr_reg, ev_rr_next;
reg [15:0]             ev_err_reg, ev_err_next;

// V0: the oldest undelivered record, taken from rec_fifo's head, with its
// connection's dead and herr bits looked up as it comes in (a 2^CONN_W-way
// read, a clock of its own). The bits it holds then follow every change:
// the dead bits the deliveries set, the herr bits the B responses set and
// what s_conn clears, each registered (dl_*, hs_*, cc_*) and applied a
// clock after it is made, in the clock's order (a clear last); the lookup
// misses only the changes of the clock it is made in, which come in the
// same way.
reg                    v0_valid_reg = 1'b0, v0_valid_next;
reg [RF_W-1:0]         v0_data_reg, v0_data_next;
// The bits as V0 holds them: the lookup itself (lk) in the clock after
// the load, from then on the bits with the changes applied (up), so that
// the 1024-way lookup is a register's input alone (a mux behind it made
// it 6 levels).
reg                    v0_dlk_reg, v0_dlk_next;
reg                    v0_hlk_reg, v0_hlk_next;
reg                    v0_dup_reg, v0_dup_next;
reg                    v0_hup_reg, v0_hup_next;
reg                    v0_src_reg = 1'b0, v0_src_next;         // the lookup (1) or the applied bits (0)
wire                   v0_dlk;
wire                   v0_hlk;
wire                   v0_dead_reg = v0_src_reg ? v0_dlk_reg : v0_dup_reg;
wire                   v0_herr_reg = v0_src_reg ? v0_hlk_reg : v0_hup_reg;
reg                    dl_set_reg = 1'b0, dl_set_next;         // a delivery set dead_reg[dl_conn_reg]
reg [CONN_W-1:0]       dl_conn_reg, dl_conn_next;
reg                    hs_set_reg = 1'b0, hs_set_next;         // herr_set, a clock ago
reg [CONN_W-1:0]       hs_conn_reg, hs_conn_next;
reg                    cc_clr_reg = 1'b0, cc_clr_next;         // s_conn cleared both bits, a clock ago
reg [CONN_W-1:0]       cc_conn_reg, cc_conn_next;

wire                   rf_en = v0_data_reg[RF_EN];
wire [MK_W-1:0]        rf_mark = v0_data_reg[RF_MARK +: MK_W];
wire [CONN_W-1:0]      rf_conn = v0_data_reg[RF_CONN +: CONN_W];
wire [RECC_W-1:0]      rf_rec = v0_data_reg[RF_REC +: RECC_W];
wire [1:0]             rf_kind = rf_rec[REC_KIND_MSB -: 2];
wire [CONN_W-1:0]      rh_conn = rf_out_data[RF_CONN +: CONN_W];      // rec_fifo's head
rnic_pick #(.AW(CONN_W)) u_v0_dlk (.v(dead_reg), .a(rh_conn), .y(v0_dlk));
rnic_pick #(.AW(CONN_W)) u_v0_hlk (.v(herr_reg), .a(rh_conn), .y(v0_hlk));
wire [MK_W-1:0]        rh_mark = rf_out_data[RF_MARK +: MK_W];
wire                   v0_clr = cc_clr_reg && cc_conn_reg == rf_conn;
wire                   v0_dead = (v0_dead_reg || (dl_set_reg && dl_conn_reg == rf_conn)) && !v0_clr;
wire                   v0_herr = (v0_herr_reg || (hs_set_reg && hs_conn_reg == rf_conn)) && !v0_clr;
wire                   ev_free = (!cpl_valid_reg || m_cpl_ready) && (!err_valid_reg || m_err_ready);
// A record waits for the B responses of every burst queued before it (its
// own included): b_cnt has reached its mark. An error response past V0's
// mark waits for V0's delivery, so it is charged to the right record; OKAY
// responses go on, but only up to 2^(MK_W-2) past that mark. While V0 is
// empty and a record is at rec_fifo's head (it moves into V0 at the next
// edge), every response waits that clock. So b_cnt - mark stays within
// -2^BQ_AW (the bursts outstanding, at most bq_fifo's depth; a record's
// mark is aw_cnt at its push) .. 2^(MK_W-2), and its sign bit says whether
// b_cnt has reached the mark however long a record waits. (Without the
// bound, a record that waited while 2^(MK_W-1) later bursts were answered
// read as not done; with no more bursts to come, the block hung.)
//
// V0's two flags, b_cnt - mark >= 0 (bdone) and >= 2^(MK_W-2) (bahead),
// are registers, made at the edge before from the four values b_cnt and
// the mark can take there (b_go or not; V0 loading the head or keeping
// its record), so that BREADY and the delivery start at registers rather
// than at a subtraction (b_cnt to bq_fifo was 7 LUT levels).
reg                    v0_bdone_reg = 1'b0, v0_bahead_reg = 1'b0, v0_bdone_next, v0_bahead_next;
wire [MK_W-1:0]        bd_h0 = b_cnt_reg - rh_mark;
wire [MK_W-1:0]        bd_h1 = b_cnt1_reg - rh_mark;
wire [MK_W-1:0]        bd_v0 = b_cnt_reg - rf_mark;
wire [MK_W-1:0]        bd_v1 = b_cnt1_reg - rf_mark;
wire                   dv_bdone = v0_bdone_reg;
wire                   dv_go = v0_valid_reg && s_verdict_tvalid && ev_free && dv_bdone;
wire                   b_hold = (v0_valid_reg ? dv_bdone && (v0_bahead_reg || b_resp[1]) : rf_out_valid)
                                && b_valid;
// Restarts (header): records queued (rec_fifo and V0, at most
// 2^REC_AW + 1), and those of the last restart's old stream still to be
// delivered.
reg  [REC_AW:0]        rq_cnt_reg = 0, rq_cnt_next;
reg  [REC_AW:0]        rs_left_reg = 0, rs_left_next;
reg  [CONN_W-1:0]      rs_conn_reg = 0, rs_conn_next;
wire                   rq_push = d2_valid_reg && e2_last_reg && !e2_early_reg && rf_in_ready;   // rec_fifo's push
wire                   v0_stale = rs_busy && rs_conn_reg == rf_conn;
wire                   v0_cstale = cf_conn && s_conn_conn == rf_conn;     // the handshake's clock
assign rs_busy = rs_left_reg != 0;
// A ULPDU of a connection that is not enabled reports nothing here
// (m_drop reported its pieces), whatever its verdict; nor a stale one.
wire                   dv_del = dv_go && !v0_dead && rf_en && !v0_stale;
// RFC 5044 8: an MPA error is fatal to the stream; a write's error
// response is an RDMAP Local Catastrophic Error (RFC 5040 7) in place of
// what the ULPDU would have reported; an error record and a Terminate end
// the stream.
wire                   dv_bad = s_verdict_tdata != 3'd0;
wire                   dv_kills = dv_bad || v0_herr || rf_kind == K_ERR || rf_kind == K_TERM;
assign te_rd_en = dv_del;
assign te_rd_conn = rf_conn;
// (A cut's record is marked by bit 0 of its inv_stag, ddp_rx_setup.v: its
// error is not the one C2 wrote into te_ram.)
assign te_own = !dv_bad && !v0_herr && rf_kind == K_ERR && !(rf_rec[REC_TAGGED] && rf_rec[REC_CPL]);

assign b_go = b_valid && bq_out_valid && !b_hold;
assign herr_set = b_go && b_resp[1];
assign herr_set_conn = bq_out_data;
assign m_axi_bready = (WR_REQ == 0) && bq_out_valid && !b_hold;

assign rf_out_ready = !v0_valid_reg || dv_go;
assign s_verdict_tready = dv_go;

always @* begin
    v0_bdone_next = v0_bdone_reg;
    v0_bahead_next = v0_bahead_reg;
    v0_valid_next = v0_valid_reg;
    v0_data_next = v0_data_reg;
    v0_dlk_next = v0_dlk_reg;
    v0_hlk_next = v0_hlk_reg;
    v0_src_next = v0_src_reg;
    v0_dup_next = v0_dup_reg;
    v0_hup_next = v0_hup_reg;
    dl_set_next = dl_set_reg;
    dl_conn_next = dl_conn_reg;
    hs_set_next = hs_set_reg;
    hs_conn_next = hs_conn_reg;
    cc_clr_next = cc_clr_reg;
    cc_conn_next = cc_conn_reg;
    cpl_valid_next = cpl_valid_reg;
    err_valid_next = err_valid_reg;
    ev_conn_next = ev_conn_reg;
    ev_rec_next = ev_rec_reg;
    ev_rr_next = ev_rr_reg;
    ev_err_next = ev_err_reg;
    dead_next = dead_reg;
    herr_next = herr_reg;
    rq_cnt_next = rq_cnt_reg;
    rs_left_next = rs_left_reg;
    rs_conn_next = rs_conn_reg;
    case ({rf_out_ready, b_go})
    2'b00: {v0_bdone_next, v0_bahead_next} = {!bd_v0[MK_W-1], bd_v0[MK_W-2]};
    2'b01: {v0_bdone_next, v0_bahead_next} = {!bd_v1[MK_W-1], bd_v1[MK_W-2]};
    2'b10: {v0_bdone_next, v0_bahead_next} = {!bd_h0[MK_W-1], bd_h0[MK_W-2]};
    default: {v0_bdone_next, v0_bahead_next} = {!bd_h1[MK_W-1], bd_h1[MK_W-2]};
    endcase
    if (rf_out_ready) begin
        v0_valid_next = rf_out_valid;
        v0_data_next = rf_out_data;
        v0_dlk_next = v0_dlk;
        v0_hlk_next = v0_hlk;
        v0_src_next = 1'b1;
    end else begin
        v0_dup_next = v0_dead;
        v0_hup_next = v0_herr;
        v0_src_next = 1'b0;
    end
    dl_set_next = dv_del && dv_kills;
    dl_conn_next = rf_conn;
    hs_set_next = herr_set;
    hs_conn_next = herr_set_conn;
    cc_clr_next = cf_conn;
    cc_conn_next = s_conn_conn;
    if (cpl_valid_reg && m_cpl_ready) begin
        cpl_valid_next = 1'b0;
    end
    if (err_valid_reg && m_err_ready) begin
        err_valid_next = 1'b0;
    end
    if (dv_del) begin
        ev_conn_next = rf_conn;
        ev_rec_next = rf_rec;
        ev_rr_next = v0_data_reg[RF_RR +: 224];
        if (dv_bad) begin
            err_valid_next = !v0_cstale;
            ev_err_next = {LAYER_LLP, ETYPE_MPA, 5'd0, s_verdict_tdata};
        end else if (v0_herr) begin
            err_valid_next = !v0_cstale;
            ev_err_next = ERR_RDMAP_LOCAL_CATASTROPHIC;
        end else if (rf_kind == K_ERR) begin
            err_valid_next = !v0_cstale;
            ev_err_next = rf_rec[REC_ERR +: 16];
        end else if (rf_kind == K_CPL || rf_kind == K_TERM) begin
            cpl_valid_next = !v0_cstale;
        end
        if (dv_kills) begin
            dead_next[rf_conn] = 1'b1;
        end
    end
    if (herr_set) begin
        herr_next[herr_set_conn] = 1'b1;
    end
    if (cf_conn) begin
        dead_next[s_conn_conn] = 1'b0;
        herr_next[s_conn_conn] = 1'b0;
    end
    rq_cnt_next = rq_cnt_reg + {{REC_AW{1'b0}}, rq_push} - {{REC_AW{1'b0}}, dv_go};
    if (cf_conn) begin
        // (rs_left is 0 here: s_conn_ready waits for it; no push now.)
        rs_left_next = rq_cnt_reg - {{REC_AW{1'b0}}, dv_go};
        rs_conn_next = s_conn_conn;
    end else if (dv_go && rs_busy) begin
        rs_left_next = rs_left_reg - 1'b1;
    end
end

always @(posedge clk) begin
    v0_bdone_reg <= v0_bdone_next;
    v0_bahead_reg <= v0_bahead_next;
    v0_valid_reg <= v0_valid_next;
    v0_data_reg <= v0_data_next;
    v0_dlk_reg <= v0_dlk_next;
    v0_hlk_reg <= v0_hlk_next;
    v0_src_reg <= v0_src_next;
    v0_dup_reg <= v0_dup_next;
    v0_hup_reg <= v0_hup_next;
    dl_set_reg <= dl_set_next;
    dl_conn_reg <= dl_conn_next;
    hs_set_reg <= hs_set_next;
    hs_conn_reg <= hs_conn_next;
    cc_clr_reg <= cc_clr_next;
    cc_conn_reg <= cc_conn_next;
    cpl_valid_reg <= cpl_valid_next;
    err_valid_reg <= err_valid_next;
    ev_conn_reg <= ev_conn_next;
    ev_rec_reg <= ev_rec_next;
    ev_rr_reg <= ev_rr_next;
    ev_err_reg <= ev_err_next;
    dead_reg <= dead_next;
    herr_reg <= herr_next;
    rq_cnt_reg <= rq_cnt_next;
    rs_left_reg <= rs_left_next;
    rs_conn_reg <= rs_conn_next;
    if (rst) begin
        rq_cnt_reg <= 0;
        rs_left_reg <= 0;
        v0_valid_reg <= 1'b0;
        dl_set_reg <= 1'b0;
        hs_set_reg <= 1'b0;
        cc_clr_reg <= 1'b0;
        cpl_valid_reg <= 1'b0;
        err_valid_reg <= 1'b0;
        dead_reg <= {NCONN{1'b0}};
        herr_reg <= {NCONN{1'b0}};
    end
end

// --- status pulses ----------------------------------------------------------

reg                    drop_valid_reg = 1'b0, drop_valid_next;
reg [CONN_W-1:0]       drop_conn_reg = 0, drop_conn_next;
reg                    drop_first_reg = 1'b0, drop_first_next;
reg [31:0]             drop_count_reg = 32'd0, drop_count_next;
reg [31:0]             drop_count1_reg = 32'd1, drop_count1_next;   // drop_count_reg + 1, stepped beside it
wire [31:0]            drop_count2;
rnic_incdec #(.W(32), .DEC(0)) u_drop2 (.x(drop_count1_reg), .y(drop_count2));
reg                    perr_valid_reg = 1'b0, perr_valid_next;
reg [CONN_W-1:0]       perr_conn_reg = 0, perr_conn_next;
reg [1:0]              perr_qn_reg = 2'd0, perr_qn_next;
reg [ID_W-1:0]         perr_id_reg = 0, perr_id_next;
reg [1:0]              perr_reason_reg = 2'd0, perr_reason_next;
reg                    berr_valid_reg = 1'b0, berr_valid_next;
reg [CONN_W-1:0]       berr_conn_reg = 0, berr_conn_next;
reg [1:0]              berr_resp_reg = 2'd0, berr_resp_next;
reg                    done_valid_reg = 1'b0, done_valid_next;
reg [CONN_W-1:0]       done_conn_reg = 0, done_conn_next;

always @* begin
    drop_valid_next = drop_valid_reg;
    drop_conn_next = drop_conn_reg;
    drop_first_next = drop_first_reg;
    drop_count_next = drop_count_reg;
    drop_count1_next = drop_count1_reg;
    perr_valid_next = perr_valid_reg;
    perr_conn_next = perr_conn_reg;
    perr_qn_next = perr_qn_reg;
    perr_id_next = perr_id_reg;
    perr_reason_next = perr_reason_reg;
    berr_valid_next = berr_valid_reg;
    berr_conn_next = berr_conn_reg;
    berr_resp_next = berr_resp_reg;
    done_valid_next = done_valid_reg;
    done_conn_next = done_conn_reg;
    // A piece of a connection that is not enabled (C2 has its context).
    // (Not an early one: its in-order copy is reported when it comes.)
    drop_valid_next = c2_go && !c_en && !c2_early_reg;
    drop_conn_next = c2_conn_reg;
    drop_first_next = c2_first_reg;
    if (c2_go && !c_en && !c2_early_reg) begin
        drop_count_next = drop_count1_reg;
        drop_count1_next = drop_count2;
    end
    // A post not taken: a connection not enabled, QN 3, a full ring.
    perr_valid_next = cf_post_reg && !o_ok;
    perr_conn_next = o_conn_reg;
    perr_qn_next = o_qn_reg;
    perr_id_next = o_ent_reg[RG_ID +: ID_W];
    perr_reason_next = !cx_rd_data[CX_EN] ? 2'd3 : o_qn_reg == 2'd3 ? 2'd2 : 2'd1;
    berr_valid_next = b_go && b_resp[1];
    berr_conn_next = bq_out_data;
    berr_resp_next = b_resp;
    // A ULPDU's last piece has left placement: all its writes are queued.
    done_valid_next = d2_valid_reg && e2_last_reg && (e2_early_reg || rf_in_ready);
    done_conn_next = e2_conn_reg;
end

always @(posedge clk) begin
    drop_valid_reg <= drop_valid_next;
    drop_conn_reg <= drop_conn_next;
    drop_first_reg <= drop_first_next;
    drop_count_reg <= drop_count_next;
    drop_count1_reg <= drop_count1_next;
    perr_valid_reg <= perr_valid_next;
    perr_conn_reg <= perr_conn_next;
    perr_qn_reg <= perr_qn_next;
    perr_id_reg <= perr_id_next;
    perr_reason_reg <= perr_reason_next;
    berr_valid_reg <= berr_valid_next;
    berr_conn_reg <= berr_conn_next;
    berr_resp_reg <= berr_resp_next;
    done_valid_reg <= done_valid_next;
    done_conn_reg <= done_conn_next;
    if (rst) begin
        drop_valid_reg <= 1'b0;
        drop_count_reg <= 32'd0;
        drop_count1_reg <= 32'd1;
        perr_valid_reg <= 1'b0;
        berr_valid_reg <= 1'b0;
        done_valid_reg <= 1'b0;
    end
end

assign m_drop_valid = drop_valid_reg;
assign m_drop_conn = drop_conn_reg;
assign m_drop_reason = 2'd1;
assign m_drop_first = drop_first_reg;
assign m_drop_count = drop_count_reg;
assign m_post_err_valid = perr_valid_reg;
assign m_post_err_conn = perr_conn_reg;
assign m_post_err_qn = perr_qn_reg;
assign m_post_err_id = perr_id_reg;
assign m_post_err_reason = perr_reason_reg;
assign m_berr_valid = berr_valid_reg;
assign m_berr_conn = berr_conn_reg;
assign m_berr_resp = berr_resp_reg;
assign m_done_valid = done_valid_reg;
assign m_done_conn = done_conn_reg;

assign m_cpl_valid = cpl_valid_reg;
assign m_cpl_conn = ev_conn_reg;
assign {m_cpl_opcode, m_cpl_tagged, m_cpl_qn, m_cpl_msn, m_cpl_len, m_cpl_id, m_cpl_stag,
        m_cpl_inv_stag} = ev_rec_reg[REC_CPL_MSB:REC_CPL];
assign m_cpl_rr = ev_rr_reg;
assign m_err_valid = err_valid_reg;
assign m_err_conn = ev_conn_reg;
assign {m_err_layer, m_err_etype, m_err_code} = ev_err_reg;

// Not needed here: ev_rec_reg[REC_KIND_MSB -: 2], ev_rec_reg[REC_ERR +: 16], o_ent_reg.
wire unused_ok = &{1'b0, ev_rec_reg[REC_KIND_MSB -: 2], ev_rec_reg[REC_ERR +: 16], o_ent_reg};
endmodule

`resetall
