// rnic_rx: the iWARP receive datapath, TCP segment payloads in, RDMAP
// placement into host memory out, DATA_W bits per clock, for 2^CONN_W
// connections.
//
//   s_axis (segments) -> mpa_rx -> rx_join -> merge -> ddp_rx -> m_axi (host memory writes)
//                          |  pieces, verdicts    ^        |     -> m_cpl, m_err, status
//                          |                      | early  |
//                          +-> mpa_rx_ooo --------+        |
//                                 +-> m_exc, m_skip        |
//   cfg_* ----------------(+ clear)------------------------+
//   s_conn, s_stag, s_post ------------------------------------> ddp_rx
//
// mpa_rx (RFC 5044 in-order Full Operation) finds the ULPDUs in the
// segments and cuts them into pieces at segment boundaries, with a verdict
// per FPDU; rx_join holds a first piece that is shorter than
// min(H, ULPDU_Length) (H: the header ddp_rx reads, 14, 18 or 46 octets)
// and joins it to the connection's next piece, so
// that every first piece reaching ddp_rx carries the whole DDP/RDMAP
// header (RFC 5041 4, RFC 5040 4), as ddp_rx requires; ddp_rx checks the
// headers and places cut through (hw/README.md, "MPA receive path and the
// interface to placement").
//
// Out of order: a segment that mpa_rx does not take because it lies past
// a hole in the connection's stream (exception reason 3) goes on to the
// host on m_exc, and mpa_rx_ooo searches it on the way for whole FPDUs
// through their markers (RFC 5044 6; connections with markers only). The
// ULPDUs it finds are merged into ddp_rx's input between pieces as early
// ULPDUs (ddp_rx: checked against the connection's state when they come,
// placed if every check passes, never reported). When the hole closes the
// host gives the segment back on s_axis and it is delineated, placed
// again (the same octets) and delivered in order, as without the search.
// The merge takes whole frames, the in-order and the early input in turn
// when both wait.
//
// Ports:
//   cfg_*        mpa_rx's per-connection configuration (cfg_conn, cfg_en,
//                cfg_mrk_en, cfg_crc_en, cfg_base; see mpa_rx.v). A write
//                also clears the connection's held octets in rx_join;
//                cfg_ready = both ready. Configure a connection while none
//                of its segments or pieces is inside.
//   fail_*       mpa_rx's: marks a connection in error (the QP failed);
//                its later segments go to m_exc with reason 2 (in error)
//                until cfg_* configures it again.
//   s_axis       TCP segment payloads, as mpa_rx's: lane-0 aligned,
//                tuser = {conn, seq[31:0], len[15:0]}.
//   m_exc_*      mpa_rx's exception stream (segments not taken in order),
//                through mpa_rx_ooo.
//   m_skip_*     mpa_rx_ooo's pulses: an out-of-order segment passed on
//                without a search (reason 1 busy, 2 too long).
//   m_early_*    a pulse for each early ULPDU taken into ddp_rx: conn.
//   ooo_busy     mpa_rx_ooo is searching a segment or has early ULPDUs
//                still to hand on.
//   s_conn_*, s_stag_*, s_post_*   ddp_rx's configuration streams.
//   m_axi_*      ddp_rx's AXI4 write master (host memory), AXI_W bits
//                (DATA_W, or 2 DATA_W for a port that keeps up with short
//                payloads at arbitrary host offsets: ddp_rx.v); idle with
//                WR_REQ = 1.
//   m_wr_*       ddp_rx's write-request stream (WR_REQ = 1, AXI_W =
//                2 DATA_W): two DATA_W lines a request from a line address,
//                byte strobes, posted; idle with WR_REQ = 0.
//   m_cpl_*, m_err_*               ddp_rx's completions and errors (m_err_hdrct,
//                                  seglen, hdr: what the Terminate copies).
//   m_drop_*, m_post_err_*, m_berr_*, m_done_*   ddp_rx's status pulses.
//   m_stat_*     pulses for the device's counters (rnic_dev), no ready:
//                m_stat_verdict_* one per verdict ddp_rx takes (code, conn:
//                mpa_rx's m_verdict, in-order FPDUs only); m_stat_place
//                one per in-order (not early) ULPDU whose first piece
//                enters ddp_rx with a payload (ULPDU_Length past the DDP
//                header: 14 octets tagged, 18 untagged), the Go model's
//                placement DMA write.
//
// Latency and throughput: those of the three blocks in a row (mpa_rx's
// cut-through pieces, 2 clocks of rx_join for a piece that needs no join,
// ddp_rx's header checks); measured by tests/rnic_rx/test_rnic_rx.py.
//
// Verification: tests/rnic_rx/test_rnic_rx.py, end to end: RDMAP messages
// through the Go stack (cmd/rnic-oracle: rdmap_segments, mpa_fpdus,
// mpa_receive, ddp_place) against the whole host memory, completions and
// errors.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_rx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter REC_AW = 3,
    parameter SEG_OCTETS = 16384,     // mpa_rx_ooo's segment buffer
    parameter AXI_W = DATA_W,         // the host write port: DATA_W or 2 DATA_W (ddp_rx)
    parameter WR_REQ = 0              // 1: host writes on the request stream m_wr_* (ddp_rx)
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_en,
    input  wire                    cfg_mrk_en,
    input  wire                    cfg_crc_en,
    input  wire [31:0]             cfg_base,

    input  wire                    fail_valid,
    output wire                    fail_ready,
    input  wire [CONN_W-1:0]       fail_conn,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+47:0]      s_axis_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser,

    output wire                    m_skip_valid,
    output wire [CONN_W-1:0]       m_skip_conn,
    output wire [31:0]             m_skip_seq,
    output wire [1:0]              m_skip_reason,
    output wire                    m_early_valid,
    output wire [CONN_W-1:0]       m_early_conn,
    output wire                    ooo_busy,

    input  wire                    s_conn_valid,
    output wire                    s_conn_ready,
    input  wire [CONN_W-1:0]       s_conn_conn,
    input  wire                    s_conn_enable,
    input  wire [31:0]             s_conn_pd,

    input  wire                    s_stag_valid,
    output wire                    s_stag_ready,
    input  wire [STAG_AW-1:0]      s_stag_index,
    input  wire                    s_stag_entry_valid,
    input  wire [7:0]              s_stag_key,
    input  wire [31:0]             s_stag_pd,
    input  wire                    s_stag_bound,
    input  wire [CONN_W-1:0]       s_stag_conn,
    input  wire [1:0]              s_stag_access,
    input  wire [63:0]             s_stag_base,
    input  wire [31:0]             s_stag_len,
    input  wire [ADDR_W-1:0]       s_stag_addr,

    input  wire                    s_post_valid,
    output wire                    s_post_ready,
    input  wire [CONN_W-1:0]       s_post_conn,
    input  wire [1:0]              s_post_qn,
    input  wire [ADDR_W-1:0]       s_post_addr,
    input  wire [31:0]             s_post_len,
    input  wire [ID_W-1:0]         s_post_id,

    output wire [0:0]              m_axi_awid,
    output wire [ADDR_W-1:0]       m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire [3:0]              m_axi_awcache,
    output wire [2:0]              m_axi_awprot,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [AXI_W-1:0]        m_axi_wdata,
    output wire [AXI_W/8-1:0]      m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [0:0]              m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,
    output wire [ADDR_W-1:0]       m_wr_addr,
    output wire [AXI_W-1:0]        m_wr_data,
    output wire [AXI_W/8-1:0]      m_wr_strb,
    output wire                    m_wr_last,
    output wire                    m_wr_valid,
    input  wire                    m_wr_ready,

    output wire                    m_cpl_valid,
    input  wire                    m_cpl_ready,
    output wire [CONN_W-1:0]       m_cpl_conn,
    output wire [3:0]              m_cpl_opcode,
    output wire                    m_cpl_tagged,
    output wire [1:0]              m_cpl_qn,
    output wire [31:0]             m_cpl_msn,
    output wire [31:0]             m_cpl_len,
    output wire [ID_W-1:0]         m_cpl_id,
    output wire [31:0]             m_cpl_stag,
    output wire [31:0]             m_cpl_inv_stag,
    output wire [223:0]            m_cpl_rr,

    output wire                    m_err_valid,
    input  wire                    m_err_ready,
    output wire [CONN_W-1:0]       m_err_conn,
    output wire [3:0]              m_err_layer,
    output wire [3:0]              m_err_etype,
    output wire [7:0]              m_err_code,
    output wire [1:0]              m_err_hdrct,
    output wire [15:0]             m_err_seglen,
    output wire [143:0]            m_err_hdr,

    output wire                    m_drop_valid,
    output wire [CONN_W-1:0]       m_drop_conn,
    output wire [1:0]              m_drop_reason,
    output wire                    m_drop_first,
    output wire [31:0]             m_drop_count,
    output wire                    m_post_err_valid,
    output wire [CONN_W-1:0]       m_post_err_conn,
    output wire [1:0]              m_post_err_qn,
    output wire [ID_W-1:0]         m_post_err_id,
    output wire [1:0]              m_post_err_reason,
    output wire                    m_berr_valid,
    output wire [CONN_W-1:0]       m_berr_conn,
    output wire [1:0]              m_berr_resp,
    output wire                    m_done_valid,
    output wire [CONN_W-1:0]       m_done_conn,

    output wire                    m_stat_verdict_valid,
    output wire [2:0]              m_stat_verdict_code,
    output wire [CONN_W-1:0]       m_stat_verdict_conn,
    output wire                    m_stat_place
);

localparam N = DATA_W / 8;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_rx: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// ---- configuration: mpa_rx's, and rx_join's clear, in one handshake --------------

wire mpa_cfg_ready, clr_ready, ooo_cfg_ready;
assign cfg_ready = mpa_cfg_ready && clr_ready;

// ---- mpa_rx -> rx_join -> ddp_rx -------------------------------------------------------

wire [DATA_W-1:0]  p_tdata;
wire [N-1:0]       p_tkeep;
wire               p_tvalid, p_tready, p_tlast;
wire [CONN_W+17:0] p_tuser;
wire [2:0]         pv_tdata;
wire               pv_tvalid, pv_tready;
wire [CONN_W-1:0]  pv_tuser;

wire [DATA_W-1:0]  j_tdata;
wire [N-1:0]       j_tkeep;
wire               j_tvalid, j_tready, j_tlast;
wire [CONN_W+17:0] j_tuser;
wire [2:0]         jv_tdata;
wire [DATA_W-1:0]  x_tdata;
wire [N-1:0]       x_tkeep;
wire               x_tvalid, x_tready, x_tlast;
wire [CONN_W+50:0] x_tuser;
wire [DATA_W-1:0]  e_tdata;
wire [N-1:0]       e_tkeep;
wire               e_tvalid, e_tready, e_tlast;
wire [CONN_W+47:0] e_tuser;
wire [DATA_W-1:0]  k_tdata;
wire [N-1:0]       k_tkeep;
wire               k_tvalid, k_tready, k_tlast;
wire [CONN_W+18:0] k_tuser;
wire               jv_tvalid, jv_tready;
wire [CONN_W-1:0]  jv_tuser;

mpa_rx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) mpa (
    .clk(clk), .rst(rst),
    .cfg_valid(cfg_valid && clr_ready), .cfg_ready(mpa_cfg_ready), .cfg_conn(cfg_conn),
    .cfg_en(cfg_en), .cfg_mrk_en(cfg_mrk_en), .cfg_crc_en(cfg_crc_en), .cfg_base(cfg_base),
    .fail_valid(fail_valid), .fail_ready(fail_ready), .fail_conn(fail_conn),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_axis_tdata(p_tdata), .m_axis_tkeep(p_tkeep), .m_axis_tvalid(p_tvalid),
    .m_axis_tready(p_tready), .m_axis_tlast(p_tlast), .m_axis_tuser(p_tuser),
    .m_verdict_tdata(pv_tdata), .m_verdict_tvalid(pv_tvalid), .m_verdict_tready(pv_tready),
    .m_verdict_tuser(pv_tuser),
    .m_exc_tdata(x_tdata), .m_exc_tkeep(x_tkeep), .m_exc_tvalid(x_tvalid),
    .m_exc_tready(x_tready), .m_exc_tlast(x_tlast), .m_exc_tuser(x_tuser)
);

mpa_rx_ooo #(.DATA_W(DATA_W), .CONN_W(CONN_W), .SEG_OCTETS(SEG_OCTETS)) ooo (
    .clk(clk), .rst(rst),
    .cfg_valid(cfg_valid && cfg_ready), .cfg_ready(ooo_cfg_ready), .cfg_conn(cfg_conn),
    .cfg_mrk_en(cfg_mrk_en), .cfg_crc_en(cfg_crc_en), .cfg_base(cfg_base),
    .s_exc_tdata(x_tdata), .s_exc_tkeep(x_tkeep), .s_exc_tvalid(x_tvalid), .s_exc_tready(x_tready),
    .s_exc_tlast(x_tlast), .s_exc_tuser(x_tuser),
    .m_exc_tdata(m_exc_tdata), .m_exc_tkeep(m_exc_tkeep), .m_exc_tvalid(m_exc_tvalid),
    .m_exc_tready(m_exc_tready), .m_exc_tlast(m_exc_tlast), .m_exc_tuser(m_exc_tuser),
    .m_early_tdata(e_tdata), .m_early_tkeep(e_tkeep), .m_early_tvalid(e_tvalid), .m_early_tready(e_tready),
    .m_early_tlast(e_tlast), .m_early_tuser(e_tuser),
    .m_skip_valid(m_skip_valid), .m_skip_conn(m_skip_conn), .m_skip_seq(m_skip_seq),
    .m_skip_reason(m_skip_reason),
    .busy(ooo_busy)
);

rx_join #(.DATA_W(DATA_W), .CONN_W(CONN_W)) joiner (
    .clk(clk), .rst(rst),
    .s_axis_tdata(p_tdata), .s_axis_tkeep(p_tkeep), .s_axis_tvalid(p_tvalid),
    .s_axis_tready(p_tready), .s_axis_tlast(p_tlast), .s_axis_tuser(p_tuser),
    .m_axis_tdata(j_tdata), .m_axis_tkeep(j_tkeep), .m_axis_tvalid(j_tvalid),
    .m_axis_tready(j_tready), .m_axis_tlast(j_tlast), .m_axis_tuser(j_tuser),
    .s_verdict_tdata(pv_tdata), .s_verdict_tvalid(pv_tvalid), .s_verdict_tready(pv_tready),
    .s_verdict_tuser(pv_tuser),
    .m_verdict_tdata(jv_tdata), .m_verdict_tvalid(jv_tvalid), .m_verdict_tready(jv_tready),
    .m_verdict_tuser(jv_tuser),
    .clr_valid(cfg_valid && mpa_cfg_ready), .clr_ready(clr_ready), .clr_conn(cfg_conn)
);

// ---- merge: rx_join's pieces and mpa_rx_ooo's early ULPDUs, frame by frame ------------
//
// A frame starts from whichever input waits, from the one not taken last
// when both do, and holds the choice to its tlast. An early ULPDU goes to
// ddp_rx as one piece: tuser {early, ulpdu_len, conn, first, last}.

reg                m_inf_reg = 1'b0;        // inside a frame
reg                m_sel_reg = 1'b0;        // its input (1: early)
reg                m_last_reg = 1'b0;       // the input of the last frame started
wire               m_pick = m_inf_reg ? m_sel_reg : (e_tvalid && (!j_tvalid || !m_last_reg));

assign k_tdata = m_pick ? e_tdata : j_tdata;
assign k_tkeep = m_pick ? e_tkeep : j_tkeep;
assign k_tvalid = m_pick ? e_tvalid : j_tvalid;
assign k_tlast = m_pick ? e_tlast : j_tlast;
assign k_tuser = m_pick ? {1'b1, e_tuser[CONN_W +: 16], e_tuser[CONN_W-1:0], 2'b11} : {1'b0, j_tuser};
assign j_tready = !m_pick && k_tready;
assign e_tready = m_pick && k_tready;

reg                early_valid_reg = 1'b0;
reg [CONN_W-1:0]   early_conn_reg = 0;

always @(posedge clk) begin
    early_valid_reg <= 1'b0;
    if (k_tvalid && k_tready) begin
        m_inf_reg <= !k_tlast;
        m_sel_reg <= m_pick;
        if (!m_inf_reg) begin
            m_last_reg <= m_pick;
            early_valid_reg <= m_pick;
            early_conn_reg <= e_tuser[CONN_W-1:0];
        end
    end
    if (rst) begin
        m_inf_reg <= 1'b0;
        m_last_reg <= 1'b0;
        early_valid_reg <= 1'b0;
    end
end

assign m_early_valid = early_valid_reg;
assign m_early_conn = early_conn_reg;

// The counters' pulses (m_stat_*): a verdict as ddp_rx takes it; a
// ULPDU's first piece (not early) with a payload, by its DDP header's T
// bit (octet 0 bit 7, RFC 5041 4) and its ULPDU_Length.
assign m_stat_verdict_valid = jv_tvalid && jv_tready;
assign m_stat_verdict_code = jv_tdata;
assign m_stat_verdict_conn = jv_tuser;
assign m_stat_place = k_tvalid && k_tready && !m_inf_reg && !k_tuser[CONN_W+18] && k_tuser[1] &&
                      k_tuser[CONN_W+2 +: 16] > (k_tdata[7] ? 16'd14 : 16'd18);

// Not needed: the early ULPDU's stream position, the always-ready
// configuration port of mpa_rx_ooo.
wire unused_ok = &{1'b0, e_tuser[CONN_W+16 +: 32], ooo_cfg_ready};

ddp_rx #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W),
    .ID_W(ID_W), .BURST(BURST), .REC_AW(REC_AW), .AXI_W(AXI_W),
    .WR_REQ(WR_REQ)
) ddp (
    .clk(clk), .rst(rst),
    .s_axis_tdata(k_tdata), .s_axis_tkeep(k_tkeep), .s_axis_tvalid(k_tvalid),
    .s_axis_tready(k_tready), .s_axis_tlast(k_tlast), .s_axis_tuser(k_tuser),
    .s_verdict_tdata(jv_tdata), .s_verdict_tuser(jv_tuser), .s_verdict_tvalid(jv_tvalid),
    .s_verdict_tready(jv_tready),
    .s_conn_valid(s_conn_valid), .s_conn_ready(s_conn_ready), .s_conn_conn(s_conn_conn),
    .s_conn_enable(s_conn_enable), .s_conn_pd(s_conn_pd),
    .s_stag_valid(s_stag_valid), .s_stag_ready(s_stag_ready), .s_stag_index(s_stag_index),
    .s_stag_entry_valid(s_stag_entry_valid), .s_stag_key(s_stag_key), .s_stag_pd(s_stag_pd),
    .s_stag_bound(s_stag_bound), .s_stag_conn(s_stag_conn), .s_stag_access(s_stag_access),
    .s_stag_base(s_stag_base), .s_stag_len(s_stag_len), .s_stag_addr(s_stag_addr),
    .s_post_valid(s_post_valid), .s_post_ready(s_post_ready), .s_post_conn(s_post_conn),
    .s_post_qn(s_post_qn), .s_post_addr(s_post_addr), .s_post_len(s_post_len), .s_post_id(s_post_id),
    .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize), .m_axi_awburst(m_axi_awburst), .m_axi_awcache(m_axi_awcache),
    .m_axi_awprot(m_axi_awprot), .m_axi_awvalid(m_axi_awvalid), .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb), .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid), .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready),
    .m_wr_addr(m_wr_addr), .m_wr_data(m_wr_data), .m_wr_strb(m_wr_strb), .m_wr_last(m_wr_last),
    .m_wr_valid(m_wr_valid), .m_wr_ready(m_wr_ready),
    .m_cpl_valid(m_cpl_valid), .m_cpl_ready(m_cpl_ready), .m_cpl_conn(m_cpl_conn),
    .m_cpl_opcode(m_cpl_opcode), .m_cpl_tagged(m_cpl_tagged), .m_cpl_qn(m_cpl_qn),
    .m_cpl_msn(m_cpl_msn), .m_cpl_len(m_cpl_len), .m_cpl_id(m_cpl_id), .m_cpl_stag(m_cpl_stag),
    .m_cpl_inv_stag(m_cpl_inv_stag), .m_cpl_rr(m_cpl_rr),
    .m_err_valid(m_err_valid), .m_err_ready(m_err_ready), .m_err_conn(m_err_conn),
    .m_err_layer(m_err_layer), .m_err_etype(m_err_etype), .m_err_code(m_err_code),
    .m_err_hdrct(m_err_hdrct), .m_err_seglen(m_err_seglen), .m_err_hdr(m_err_hdr),
    .m_drop_valid(m_drop_valid), .m_drop_conn(m_drop_conn), .m_drop_reason(m_drop_reason),
    .m_drop_first(m_drop_first), .m_drop_count(m_drop_count),
    .m_post_err_valid(m_post_err_valid), .m_post_err_conn(m_post_err_conn),
    .m_post_err_qn(m_post_err_qn), .m_post_err_id(m_post_err_id),
    .m_post_err_reason(m_post_err_reason),
    .m_berr_valid(m_berr_valid), .m_berr_conn(m_berr_conn), .m_berr_resp(m_berr_resp),
    .m_done_valid(m_done_valid), .m_done_conn(m_done_conn)
);

endmodule

`resetall
