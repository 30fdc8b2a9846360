// ddp_rx_tables: ddp_rx's tables and configuration
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// The four tables, each an sdp_ram (one read, one write port; read data
// the clock after the address): the check context of each connection (CX
// in ddp_rx_defs.vh; read by H, written by C2 or a configuration), the
// placement context between a ULPDU's pieces (DX; read by D0, written by
// D4), the STag entries (ST; read by H, written by s_stag, invalidated
// by C2) and the posted buffers of each queue (RG; read by H, written by
// s_post). Configuration (s_conn, s_stag, s_post; priority conn > stag >
// post) is taken between pieces once placement is empty (all_idle; a
// pending request holds s_axis_tready low at the next piece's start:
// cfg_pending to ddp_rx_intake); a post reads the context (one clock) and
// writes the ring and context the next, or is refused (o_ok low:
// m_post_err from ddp_rx_deliver).
//
// The fence (s_stag and s_conn, not s_post): besides all_idle, the write
// queues are empty (wq_busy low: the port has taken every write placed so
// far) and every burst's B response is in (bq_out_valid low). A driver
// that invalidates an STag (s_stag entry_valid 0) unpins its memory once
// the handshake is done (issue 30; draft-ietf-rddp-ddp-07 8.1: nothing is
// placed through an STag once it is invalid), and one that restarts a
// connection reuses the old stream's posted buffers: for an AXI4 memory a
// write is done only at its B response (until then it may still be in an
// interconnect, behind the handshake), so the fence waits for that, and no
// write placed before the handshake reaches memory after it. (On
// the write-request port writes are posted: a burst is answered once its
// last request has gone.) s_conn also waits while rs_busy (ddp_rx_deliver:
// records of the previous restart's old stream not yet delivered). This
// cannot deadlock: the queues drain with the write port alone; a B
// response waits at most for the delivery of a record already queued
// (b_hold), and a delivery for its verdict and for m_cpl/m_err: a verdict
// of a ULPDU whose last piece is in, which does not wait for the piece
// behind the request (placement already relies on this: it waits for
// bq_fifo room, that is for the same B responses).
//
// After reset the context, placement and STag tables are cleared, one
// entry of each a clock (clr_busy_reg, 2^max(CONN_W, STAG_AW) clocks from
// rst's fall); the ready outputs are low meanwhile (s_axis_tready through
// ddp_rx_intake's hold).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_tables #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4
) (
    clk,
    rst,
    s_conn_valid,
    s_conn_conn,
    s_conn_enable,
    s_conn_pd,
    s_stag_valid,
    s_stag_index,
    s_stag_entry_valid,
    s_stag_key,
    s_stag_pd,
    s_stag_bound,
    s_stag_conn,
    s_stag_access,
    s_stag_base,
    s_stag_len,
    s_stag_addr,
    s_post_valid,
    s_post_conn,
    s_post_qn,
    s_post_addr,
    s_post_len,
    s_post_id,
    dx_rd_en,
    dx_rd_addr,
    i_inpiece_reg,
    df_out_valid,
    hf_out_valid,
    c_adv,
    h_valid,
    hf_conn,
    hf_hdr,
    hf_idx32,
    c1_valid_reg,
    b_valid_reg,
    c2_valid_reg,
    c2_conn_reg,
    e_st_reg,
    k_idx,
    r_inval,
    r_cx,
    c2_decide,
    dc_out_valid,
    aw_cnt_reg,
    d2_valid_reg,
    d4_valid_reg,
    pl_empty,
    e2_last_reg,
    e2_en_reg,
    e2_early_reg,
    e2_conn_reg,
    e2_rec_reg,
    e2_rr_reg,
    e4_place_reg,
    e4_conn_reg,
    e4_rec_reg,
    e4_rr_reg,
    e4_nxt,
    e4_left,
    s_conn_ready,
    s_stag_ready,
    s_post_ready,
    cx_rd_data,
    dx_rd_data,
    st_rd_data,
    rg_rd_data,
    cf_post_reg,
    rf_in_valid,
    rf_in_data,
    cf_conn,
    cf_stag,
    clr_busy_reg,
    o_conn_reg,
    o_qn_reg,
    o_ent_reg,
    o_ok,
    wq_busy,
    bq_out_valid,
    rs_busy
);
reg cf_post_next;
reg [RG_W-1:0] o_ent_next;
reg [1:0] o_qn_next;
reg [CONN_W-1:0] o_conn_next;
reg clr_busy_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire                        s_conn_valid;
input  wire [CONN_W-1:0]           s_conn_conn;
input  wire                        s_conn_enable;
input  wire [31:0]                 s_conn_pd;
input  wire                        s_stag_valid;
input  wire [STAG_AW-1:0]          s_stag_index;
input  wire                        s_stag_entry_valid;
input  wire [7:0]                  s_stag_key;
input  wire [31:0]                 s_stag_pd;
input  wire                        s_stag_bound;
input  wire [CONN_W-1:0]           s_stag_conn;
input  wire [1:0]                  s_stag_access;
input  wire [63:0]                 s_stag_base;
input  wire [31:0]                 s_stag_len;
input  wire [ADDR_W-1:0]           s_stag_addr;
input  wire                        s_post_valid;
input  wire [CONN_W-1:0]           s_post_conn;
input  wire [1:0]                  s_post_qn;
input  wire [ADDR_W-1:0]           s_post_addr;
input  wire [31:0]                 s_post_len;
input  wire [ID_W-1:0]             s_post_id;
input  wire                        dx_rd_en;
input  wire [CONN_W-1:0]           dx_rd_addr;
input  wire                        i_inpiece_reg;
input  wire                        df_out_valid;
input  wire                        hf_out_valid;
input  wire                        c_adv;
input  wire                        h_valid;
input  wire [CONN_W-1:0]           hf_conn;
input  wire [143:0]                hf_hdr;
input  wire [31:0]                 hf_idx32;
input  wire                        c1_valid_reg;
input  wire                        b_valid_reg;
input  wire                        c2_valid_reg;
input  wire [CONN_W-1:0]           c2_conn_reg;
input  wire [ST_W-2:0]             e_st_reg;
input  wire [STAG_AW-1:0]          k_idx;
input  wire                        r_inval;
input  wire [CX_W-1:0]             r_cx;
input  wire                        c2_decide;
input  wire                        dc_out_valid;
input  wire [MK_W-1:0]             aw_cnt_reg;
input  wire                        d2_valid_reg;
input  wire                        d4_valid_reg;
input  wire                        pl_empty;
input  wire                        e2_last_reg;
input  wire                        e2_en_reg;
input  wire                        e2_early_reg;
input  wire [CONN_W-1:0]           e2_conn_reg;
input  wire [RECC_W-1:0]           e2_rec_reg;
input  wire [223:0]                e2_rr_reg;
input  wire                        e4_place_reg;
input  wire [CONN_W-1:0]           e4_conn_reg;
input  wire [RECC_W-1:0]           e4_rec_reg;
input  wire [223:0]                e4_rr_reg;
input  wire [ADDR_W-1:0]           e4_nxt;
input  wire [15:0]                 e4_left;
output wire                        s_conn_ready;
output wire                        s_stag_ready;
output wire                        s_post_ready;
output wire [CX_W-1:0]             cx_rd_data;
output wire [DX_W-1:0]             dx_rd_data;
output wire [ST_W-1:0]             st_rd_data;
output wire [RG_W-1:0]             rg_rd_data;
output reg                         cf_post_reg = 1'b0;
output reg                         rf_in_valid;
output reg  [RF_W-1:0]             rf_in_data;
output wire                        cf_conn;
output wire                        cf_stag;
output reg                         clr_busy_reg = 1'b0;
output reg  [CONN_W-1:0]           o_conn_reg;
output reg  [1:0]                  o_qn_reg;
output reg  [RG_W-1:0]             o_ent_reg;
output reg                         o_ok;
input  wire                        wq_busy;
input  wire                        bq_out_valid;
input  wire                        rs_busy;

// --- state shared with configuration -------------------------------------------

// Connections that took an error B response (SLVERR, DECERR) since their
// last (re)start: nothing more of them is placed, and the next delivery
// record of the connection reports a Local Catastrophic Error.

// --- tables -----------------------------------------------------------------

reg                  cx_wr_en;
reg  [CONN_W-1:0]    cx_wr_addr;
reg  [CX_W-1:0]      cx_wr_data;
reg                  cx_rd_en;
reg  [CONN_W-1:0]    cx_rd_addr;

sdp_ram #(.WIDTH(CX_W), .ADDR_W(CONN_W)) ctx_ram (
    .clk(clk),
    .wr_en(cx_wr_en), .wr_addr(cx_wr_addr), .wr_data(cx_wr_data),
    .rd_en(cx_rd_en), .rd_addr(cx_rd_addr), .rd_data(cx_rd_data)
);

// The placement context, written at the end of every piece that does not
// end its ULPDU and read by the next piece of the same ULPDU (which may
// come after pieces of other connections). A Read Request's body (octets
// 18..45 of its ULPDU) travels in it from the first piece to the last.
reg                  dx_wr_en;
reg  [CONN_W-1:0]    dx_wr_addr;
reg  [DX_W-1:0]      dx_wr_data;

sdp_ram #(.WIDTH(DX_W), .ADDR_W(CONN_W)) place_ram (
    .clk(clk),
    .wr_en(dx_wr_en), .wr_addr(dx_wr_addr), .wr_data(dx_wr_data),
    .rd_en(dx_rd_en), .rd_addr(dx_rd_addr), .rd_data(dx_rd_data)
);

reg                  st_wr_en;
reg  [STAG_AW-1:0]   st_wr_addr;
reg  [ST_W-1:0]      st_wr_data;
reg                  st_rd_en;
reg  [STAG_AW-1:0]   st_rd_addr;

sdp_ram #(.WIDTH(ST_W), .ADDR_W(STAG_AW)) stag_ram (
    .clk(clk),
    .wr_en(st_wr_en), .wr_addr(st_wr_addr), .wr_data(st_wr_data),
    .rd_en(st_rd_en), .rd_addr(st_rd_addr), .rd_data(st_rd_data)
);

reg                  rg_wr_en;
reg  [RG_AW-1:0]     rg_wr_addr;
reg  [RG_W-1:0]      rg_wr_data;
reg                  rg_rd_en;
reg  [RG_AW-1:0]     rg_rd_addr;

sdp_ram #(.WIDTH(RG_W), .ADDR_W(RG_AW)) ring_ram (
    .clk(clk),
    .wr_en(rg_wr_en), .wr_addr(rg_wr_addr), .wr_data(rg_wr_data),
    .rd_en(rg_rd_en), .rd_addr(rg_rd_addr), .rd_data(rg_rd_data)
);

// Second push ports of the queues that take one word a clock.


// --- clear after reset ------------------------------------------------------

// rst clears flops, not the tables: a sweep after it writes every context
// {enable 0, fail 0, each queue empty at MSN 1}, every placement context
// 0 and every STag entry invalid (clr_addr_reg over 2^CLR_AW clocks), so
// that nothing configured before the reset acts after it. Meanwhile the
// ready outputs are low (s_axis_tready through the intake's hold). The
// rings need no clear: a ring is read only at slots that the context's
// queue state says were posted (nor stgen_ram/tgen_ram, ddp_rx_setup: no
// placement context carries a ULPDU after the clear).
localparam integer CLR_AW = CONN_W > STAG_AW ? CONN_W : STAG_AW;
reg  [CLR_AW-1:0]    clr_addr_reg = {CLR_AW{1'b0}}, clr_addr_next;

always @* begin
    clr_addr_next = clr_addr_reg;
    clr_busy_next = clr_busy_reg;
    if (clr_busy_reg) begin
        clr_addr_next = clr_addr_reg + 1'b1;
        if (&clr_addr_reg) begin
            clr_busy_next = 1'b0;
        end
    end
end

always @(posedge clk) begin
    clr_addr_reg <= clr_addr_next;
    clr_busy_reg <= clr_busy_next;
    if (rst) begin
        clr_busy_reg <= 1'b1;
        clr_addr_reg <= {CLR_AW{1'b0}};
    end
end

// --- configuration (when the pipeline is empty) -----------------------------

wire                 all_idle = !i_inpiece_reg && !hf_out_valid && !c1_valid_reg && !b_valid_reg && !c2_valid_reg
                                && !dc_out_valid && pl_empty && !df_out_valid && !cf_post_reg;

// The fence: every write placed so far taken and answered (header); and
// not while the tables are cleared after reset.
wire                 fence_idle = all_idle && !wq_busy && !bq_out_valid;

assign s_conn_ready = fence_idle && !rs_busy && !clr_busy_reg;
assign s_stag_ready = fence_idle && !clr_busy_reg && !s_conn_valid;
assign s_post_ready = all_idle && !clr_busy_reg && !s_conn_valid && !s_stag_valid;

assign cf_conn = s_conn_valid && s_conn_ready;
assign cf_stag = s_stag_valid && s_stag_ready;
wire                 cf_post = s_post_valid && s_post_ready;

reg [Q_W-1:0]        o_q;
reg [31:0]           o_first;
reg [RQ_AW:0]        o_cnt;
reg [CX_W-1:0]       o_cx;

always @* begin
    o_conn_next = o_conn_reg;
    o_qn_next = o_qn_reg;
    o_ent_next = o_ent_reg;
    cf_post_next = cf_post_reg;
    if (cf_post) begin
        o_conn_next = s_post_conn;
        o_qn_next = s_post_qn;
        o_ent_next = {s_post_addr, s_post_len, s_post_id};
    end
    cf_post_next = cf_post;
end

always @(posedge clk) begin
    o_conn_reg <= o_conn_next;
    o_qn_reg <= o_qn_next;
    o_ent_reg <= o_ent_next;
    cf_post_reg <= cf_post_next;
    if (rst) begin
        cf_post_reg <= 1'b0;
    end
end

always @* begin
    o_q = cx_q(cx_rd_data[CX_Q0 +: CX_QS_W], o_qn_reg);
    {o_first, o_cnt} = o_q;
    o_ok = cx_rd_data[CX_EN] && o_qn_reg != 2'd3 && o_cnt != (1 << RQ_AW);
    o_cx = cx_rd_data;
    case (o_qn_reg)
        2'd1: o_cx[Q_W +: Q_W] = {o_first, o_cnt + 1'b1};
        2'd2: o_cx[2*Q_W +: Q_W] = {o_first, o_cnt + 1'b1};
        default: o_cx[0 +: Q_W] = {o_first, o_cnt + 1'b1};
    endcase
end

// Table ports: the pipeline's, or configuration's while it is empty.
always @* begin
    cx_rd_en = h_valid && c_adv;
    cx_rd_addr = hf_conn;
    st_rd_en = h_valid && c_adv;
    st_rd_addr = hf_idx32[8 +: STAG_AW];
    rg_rd_en = h_valid && c_adv;
    rg_rd_addr = {hf_conn, hf_hdr[8*9 +: 2], hf_hdr[8*13 +: RQ_AW]};
    cx_wr_en = c2_decide;
    cx_wr_addr = c2_conn_reg;
    cx_wr_data = r_cx;
    st_wr_en = c2_decide && r_inval;
    st_wr_addr = k_idx;
    st_wr_data = {1'b0, e_st_reg};
    rg_wr_en = 1'b0;
    rg_wr_addr = {o_conn_reg, o_qn_reg, o_first[RQ_AW-1:0] + o_cnt[RQ_AW-1:0]};
    rg_wr_data = o_ent_reg;
    dx_wr_en = d4_valid_reg;
    dx_wr_addr = e4_conn_reg;
    dx_wr_data = {e4_place_reg, e4_nxt, e4_left, e4_rec_reg, e4_rr_reg};
    rf_in_valid = d2_valid_reg && e2_last_reg && !e2_early_reg;
    rf_in_data = {e2_en_reg, aw_cnt_reg, e2_conn_reg, e2_rec_reg, e2_rr_reg};
    if (cf_conn) begin
        // (Re)start a connection (RFC 5041 4.3: every queue at MSN 1).
        cx_wr_en = 1'b1;
        cx_wr_addr = s_conn_conn;
        cx_wr_data = {s_conn_enable, s_conn_pd, 1'b0, Q_INIT, Q_INIT, Q_INIT};
        dx_wr_en = 1'b1;
        dx_wr_addr = s_conn_conn;
        dx_wr_data = {DX_W{1'b0}};
    end else if (cf_stag) begin
        st_wr_en = 1'b1;
        st_wr_addr = s_stag_index;
        st_wr_data = {s_stag_entry_valid, s_stag_key, s_stag_pd, s_stag_bound, s_stag_conn,
                      s_stag_access, s_stag_base, s_stag_len, s_stag_addr};
    end else if (cf_post) begin
        cx_rd_en = 1'b1;
        cx_rd_addr = s_post_conn;
    end
    if (cf_post_reg && o_ok) begin
        // The buffer takes the MSN after the last posted one (4.3).
        rg_wr_en = 1'b1;
        cx_wr_en = 1'b1;
        cx_wr_addr = o_conn_reg;
        cx_wr_data = o_cx;
    end
    if (clr_busy_reg) begin
        // The clear after reset (nothing else moves meanwhile).
        cx_wr_en = 1'b1;
        cx_wr_addr = clr_addr_reg[CONN_W-1:0];
        cx_wr_data = {1'b0, 32'd0, 1'b0, Q_INIT, Q_INIT, Q_INIT};
        dx_wr_en = 1'b1;
        dx_wr_addr = clr_addr_reg[CONN_W-1:0];
        dx_wr_data = {DX_W{1'b0}};
        st_wr_en = 1'b1;
        st_wr_addr = clr_addr_reg[STAG_AW-1:0];
        st_wr_data = {ST_W{1'b0}};
    end
end

// Not needed here: hf_hdr, hf_idx32.
wire unused_ok = &{1'b0, hf_hdr, hf_idx32};
endmodule

`resetall
