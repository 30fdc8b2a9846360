// rnic_dev: the RNIC as a device, the top that a PCIe bridge (on a board)
// or the simulated host (hw/sim) drives. docs/device.md is its contract
// with the driver.
//
// Ports: the BAR (s_axil), DMA (m_axi, AXI4 master), the network seam
// (s_net in, m_net out), interrupt messages (m_irq) and idle (for the
// simulated host's clock). s_axil is the BAR (AXI4-Lite, 32-bit data,
// 128 KiB) and reaches the generated register block (rnic_regs, from
// hw/regs/rnic.rdl): the chain of blocks, the ID block with this build's
// parameters, the counters, the admin mailbox's registers, and the
// external regions the device answers itself (the mailbox's CMD, the
// interrupt vectors, the doorbells). A CMD write starts the command in
// rnic_admin (the executor: its tables of CQs, QPs, MRs, DMA windows and
// the event ring configuration); STATUS.BUSY is set until it answers with
// STATUS.CODE and, for QP_DRAIN, the output ARG words, and while the
// datapath has not yet taken a command's effect; a CMD write while BUSY
// is ignored and counted in admin_overrun. CMD reads back the opcode of
// the last command accepted.
//
// The engines around the datapath (docs/device.md, "What the device top
// has today"):
//   send     SQ doorbells -> rnic_sq (SQ entries, MR checks, payload reads)
//            and rnic_rresp (Read Responses) -> rnic_txarb -> rnic_tx ->
//            m_net, with each connection's transmit sequence number
//   receive  s_net -> rnic_rx (MPA, DDP placement through the STag table)
//            -> rnic_axisink (the device's own buffers) -> rnic_dma_wr's
//            placement port; ddp_rx's completions to rnic_sq (a Read's
//            last Read Response), rnic_rq (Sends: receive CQEs) and
//            rnic_rresp (Read Requests)
//   buffers  RQ doorbells -> rnic_rq (RQ entries, MR checks) -> ddp_rx's
//            queue 0; rnic_rresp's Read Request and Terminate buffers
//   DMA      rnic_dma_rd (4 clients), rnic_dma_wr (3 clients and the
//            placement port), both with the DMA window check
//   host     rnic_cq (CQEs of rnic_sq and rnic_rq, merged), rnic_evq
//            (events), rnic_exc (the exception ring: the segments rnic_rx
//            does not take), rnic_irq (vectors, moderation)
// Shared: rnic_admin's QP and MR read ports (rnic_rdarb), the CQ writer's,
// ddp_rx's post and rnic_tx's ports (rnic_recmux, rnic_txarb).
// QP failures (the model's fail()): the engines' local faults, the
// peer's stream errors (ddp_rx's m_err), its Terminates (ddp_rx's queue 2
// completions), the Read responder's protection errors and CQ overruns
// all reach rnic_sq's xfail (xfmux below), which raises the event, sends
// the Terminate and gives the target's status to the oldest Read or
// (qerr) the oldest receive; ddp_rx then places nothing more for the QP.
// Not yet: the Terminate the device sends for an error in the peer's
// stream copies no headers (hdrct 0: no DDP or RDMAP header, no segment
// length; the model's does, RFC 5040 7.2). After a failure the peer's
// segments go to the exception ring (reason in error), as the model's do,
// once rnic_rx's fail_* has marked the connection (the segments already
// inside by then are dropped by ddp_rx). The counters block counts
// as the Go model does (below, "the counters block").
//
// Parameters are the build's: they size the device and are published in
// the ID block, so that the driver sizes itself from the device it finds.
//   DATA_W      datapath width in bits (64, 128, 256, 512)
//   CONN_W      log2 of the connections (queue pairs), at most 12
//   STAG_AW     log2 of the MR table's entries
//   CQ_W        log2 of the completion queues, at most 12
//   VEC_W       log2 of the interrupt vectors, at most 4
//   WIN_W       log2 of the DMA window slots
//   SQ_LOG2, RQ_LOG2, CQ_LOG2   log2 of the largest ring of each kind
//   BUILD_HASH  the build's identity (the first 32 bits of the commit)
//
// Reset: rst is synchronous, active high, and clears every register.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_dev #(
    parameter DATA_W     = 64,
    parameter CONN_W     = 6,
    parameter STAG_AW    = 10,
    parameter SQ_LOG2    = 10,
    parameter RQ_LOG2    = 10,
    parameter CQ_LOG2    = 12,
    parameter CQ_W       = 6,
    parameter VEC_W      = 2,
    parameter WIN_W      = 4,
    parameter BUILD_HASH = 32'h0,
    parameter BAR_AW     = 17,
    parameter AXI_ID_W   = 4
) (
    input  wire              clk,
    input  wire              rst,

    input  wire              s_axil_awvalid,
    output wire              s_axil_awready,
    input  wire [BAR_AW-1:0] s_axil_awaddr,
    input  wire [2:0]        s_axil_awprot,
    input  wire              s_axil_wvalid,
    output wire              s_axil_wready,
    input  wire [31:0]       s_axil_wdata,
    input  wire [3:0]        s_axil_wstrb,
    output wire              s_axil_bvalid,
    input  wire              s_axil_bready,
    output wire [1:0]        s_axil_bresp,
    input  wire              s_axil_arvalid,
    output wire              s_axil_arready,
    input  wire [BAR_AW-1:0] s_axil_araddr,
    input  wire [2:0]        s_axil_arprot,
    output wire              s_axil_rvalid,
    input  wire              s_axil_rready,
    output wire [31:0]       s_axil_rdata,
    output wire [1:0]        s_axil_rresp,

    // DMA: AXI4 master to host memory (INCR bursts, never across 4 KiB).
    output wire [AXI_ID_W-1:0] m_axi_awid,
    output wire [63:0]         m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire [DATA_W-1:0]   m_axi_wdata,
    output wire [DATA_W/8-1:0] m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire [AXI_ID_W-1:0] m_axi_bid,
    input  wire [1:0]          m_axi_bresp,
    input  wire                m_axi_bvalid,
    output wire                m_axi_bready,
    output wire [AXI_ID_W-1:0] m_axi_arid,
    output wire [63:0]         m_axi_araddr,
    output wire [7:0]          m_axi_arlen,
    output wire [2:0]          m_axi_arsize,
    output wire [1:0]          m_axi_arburst,
    output wire                m_axi_arvalid,
    input  wire                m_axi_arready,
    input  wire [AXI_ID_W-1:0] m_axi_rid,
    input  wire [DATA_W-1:0]   m_axi_rdata,
    input  wire [1:0]          m_axi_rresp,
    input  wire                m_axi_rlast,
    input  wire                m_axi_rvalid,
    output wire                m_axi_rready,

    // The network seam (docs/device.md, "Shape"): TCP segments of the
    // offloaded connections, one frame a segment, lane-0 aligned, tuser =
    // {qpn[15:0], seq[31:0], len[15:0]} on every beat. In: what the host
    // (or a board's MAC and classifier) received; out: what the device
    // sends.
    input  wire [DATA_W-1:0]   s_net_tdata,
    input  wire [DATA_W/8-1:0] s_net_tkeep,
    input  wire                s_net_tvalid,
    output wire                s_net_tready,
    input  wire                s_net_tlast,
    input  wire [63:0]         s_net_tuser,
    output wire [DATA_W-1:0]   m_net_tdata,
    output wire [DATA_W/8-1:0] m_net_tkeep,
    output wire                m_net_tvalid,
    input  wire                m_net_tready,
    output wire                m_net_tlast,
    output wire [63:0]         m_net_tuser,

    // Interrupts: one message a vector fire (MSI-X style; the simulated
    // host sends it to the driver as IRQ).
    output wire                m_irq_valid,
    input  wire                m_irq_ready,
    output wire [3:0]          m_irq_vector,

    // The configuration flash (rnic_flash; docs/firmware-update.md): an
    // SPI NOR part, mode 0. On a board these reach the part through the
    // FPGA's configuration pins (e.g. STARTUPE3's USRCCLKO, FCSBO, DO, DTS
    // and DI on UltraScale+); in simulation hw/sim's flash model.
    output wire                spi_sck,
    output wire                spi_cs_n,
    output wire [3:0]          spi_io_o,
    output wire [3:0]          spi_io_oe,
    input  wire [3:0]          spi_io_i,

    // High when the device has nothing in progress and nothing due (no
    // command, transfer or timer): the simulated host stops the clock
    // then until the driver asks for something.
    output wire                idle
);
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_dev: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (BAR_AW != 17) begin
        $error("rnic_dev: BAR_AW must be the register block's address width, 17, got %0d", BAR_AW);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 12 || CQ_W < 1 || CQ_W > 12 || VEC_W > 4) begin
        $error("rnic_dev: CONN_W and CQ_W must be 1 to 12 and VEC_W at most 4 (the doorbell and vector blocks' room), got %0d, %0d, %0d",
               CONN_W, CQ_W, VEC_W);
        $finish;
    end
end

localparam [31:0] CONNS   = 32'd1 << CONN_W;
localparam [31:0] STAGS   = 32'd1 << STAG_AW;
localparam [31:0] CQS     = 32'd1 << CQ_W;
localparam [31:0] VECTORS = 32'd1 << VEC_W;
localparam [31:0] WINDOWS = 32'd1 << WIN_W;
// The mailbox's CMD register: a write is a command for rnic_admin.
wire         cmd_req, cmd_is_wr;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]  cmd_wr_data, cmd_wr_biten;   // the opcode is [7:0]
/* verilator lint_on UNUSEDSIGNAL */
wire [255:0] args_wr;                     // ARG0..ARG7 as the driver wrote them
wire         adm_busy, adm_out_we, adm_overrun;
wire [7:0]   adm_code, adm_last_op;
wire [255:0] adm_out;
// QP_DRAIN's output words: the engines' consumer indices of its QP.
wire [CONN_W-1:0] drain_qpn;
wire [15:0]       drain_sq_ci, drain_rq_ci;
// The datapath has not yet taken a command's effect (rnic_rx's and
// ddp_rx's configuration queues below): STATUS.BUSY stays set and a CMD
// write is refused as while the mailbox runs. ddp_rx takes an STag write
// or a connection's disable only once no placement write before it is
// queued or unanswered (its fence), so a driver that waits for BUSY to
// clear after MR_INVALIDATE or QP_DRAIN may reuse the memory.
wire         dp_busy;
// rnic_admin toward the engines.
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;
wire                qp_rts_valid, qp_state_wr_valid, qp_rd_en, rts_rd_en, mr_rd_en, mr_rd_valid;
wire [CONN_W-1:0]   qp_rts_qpn, qp_state_wr_qpn, qp_rd_qpn, rts_rd_qpn;
wire [227:0]        qp_rts_params, rts_rd_params;
wire [1:0]          qp_state_wr_state, qp_rd_state;
wire [QP_CTX_W-1:0] qp_rd_ctx;
wire [STAG_AW-1:0]  mr_rd_index;
wire [235:0]        mr_rd_entry;
wire                cq_rd_en, cq_rd_valid, cq_cfg_valid, cq_cfg_create;
wire [CQ_W-1:0]     cq_rd_cqn, cq_cfg_cqn;
wire [64+5+VEC_W-1:0] cq_rd_ctx;
wire                evr_valid, evr_set;
wire [63:0]         evr_ring;
wire [4:0]          evr_log2;
wire [63:0]         evr_exc_ring;
wire [4:0]          evr_exc_log2, evr_exc_buf_log2;
wire                win_wr_valid;
wire [15:0]         qp_state_wr_pd;
wire                mr_wr_valid, mr_inv_valid;
wire [STAG_AW-1:0]  mr_wr_index, mr_inv_index;
wire [7:0]          mr_wr_key;
wire [3:0]          mr_wr_access;
wire [15:0]         mr_wr_pd, mr_wr_bound;
wire [63:0]         mr_wr_base_to, mr_wr_len, mr_wr_addr;
wire [WIN_W-1:0]    win_wr_slot;
wire [63:0]         win_wr_addr, win_wr_len;
// The BAR's external regions: the interrupt vectors and the doorbells.
wire vec_req, vec_is_wr, cqdb_req, cqdb_is_wr, qpdb_req, qpdb_is_wr;
wire [7:0]  vec_addr;
wire [13:0] cqdb_addr;
wire [14:0] qpdb_addr;
wire [31:0] vec_wr_data, vec_wr_biten, cqdb_wr_data, cqdb_wr_biten, qpdb_wr_data, qpdb_wr_biten;

rnic_admin #(
    .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)
) admin (
    .clk(clk),
    .rst(rst),
    .cmd_wr(cmd_req && cmd_is_wr && !dp_busy),
    .cmd_op(cmd_wr_data[7:0]),
    .cmd_args(args_wr),
    .busy(adm_busy),
    .status_code(adm_code),
    .last_op(adm_last_op),
    .out_args(adm_out),
    .out_args_we(adm_out_we),
    .overrun(adm_overrun),
    .ci_qpn(drain_qpn), .sq_ci(drain_sq_ci), .rq_ci(drain_rq_ci),
    // Toward the engines below. The exception ring's configuration waits
    // for the exception writer.
    /* verilator lint_off PINCONNECTEMPTY */
    .mr_wr_valid(mr_wr_valid), .mr_wr_index(mr_wr_index), .mr_wr_key(mr_wr_key), .mr_wr_access(mr_wr_access),
    .mr_wr_pd(mr_wr_pd), .mr_wr_bound(mr_wr_bound), .mr_wr_base_to(mr_wr_base_to), .mr_wr_len(mr_wr_len),
    .mr_wr_addr(mr_wr_addr), .mr_inv_valid(mr_inv_valid), .mr_inv_index(mr_inv_index),
    .dp_inv_valid(rq_inv_valid), .dp_inv_index(rq_inv_index),   // a Send with Invalidate (rnic_rq)
    .mr_rd_en(mr_rd_en), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_state_wr_pd(qp_state_wr_pd),
    .qp_rd_en(qp_rd_en), .qp_rd_qpn(qp_rd_qpn), .qp_rd_state(qp_rd_state), .qp_rd_ctx(qp_rd_ctx),
    .rts_rd_en(rts_rd_en), .rts_rd_qpn(rts_rd_qpn), .rts_rd_params(rts_rd_params),
    .cq_rd_en(cq_rd_en), .cq_rd_cqn(cq_rd_cqn), .cq_rd_valid(cq_rd_valid), .cq_rd_ctx(cq_rd_ctx),
    .cq_cfg_valid(cq_cfg_valid), .cq_cfg_cqn(cq_cfg_cqn), .cq_cfg_create(cq_cfg_create),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_ring(evr_ring), .evr_log2(evr_log2),
    .evr_exc_ring(evr_exc_ring), .evr_exc_log2(evr_exc_log2), .evr_exc_buf_log2(evr_exc_buf_log2),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len)
    /* verilator lint_on PINCONNECTEMPTY */
);

// --- the send side: SQ engine -> rnic_tx -> m_net -----------------------------
// (Outputs the device does not use yet are left open, named.)
/* verilator lint_off PINCONNECTEMPTY */

// Doorbells: SQ_PI[qpn] at +8 qpn, RQ_PI[qpn] at +8 qpn + 4 of the QP
// doorbell region; CQ_CI[cqn] at +4 cqn of the CQ doorbell region. One
// write a clock reaches the engines (the BAR takes one access at a time).
wire sqdb_valid = qpdb_req && qpdb_is_wr && !qpdb_addr[2];
wire rqdb_valid = qpdb_req && qpdb_is_wr && qpdb_addr[2];
wire cqdb_valid = cqdb_req && cqdb_is_wr;

// rnic_tx's descriptor ({opcode, stag, to, msn, inv_stag, len, rr_sink_stag,
// rr_sink_to, rr_size, rr_src_stag, rr_src_to, mulpdu, conn}) from each
// message source: 0 rnic_sq, 1 rnic_rresp.
localparam DESC_W = 4 + 32 + 64 + 32 + 32 + 32 + 32 + 64 + 32 + 32 + 64 + 16 + CONN_W;
localparam N_TX = 2;
wire [N_TX-1:0]          txs_desc_valid, txs_desc_ready, txs_pay, txs_valid, txs_ready, txs_last;
wire [N_TX*DESC_W-1:0]   txs_desc;
wire [N_TX*DATA_W-1:0]   txs_data;
wire [N_TX*DATA_W/8-1:0] txs_keep;
wire [3:0]        sq_desc_opcode;
wire [31:0]       sq_desc_stag, sq_desc_msn, sq_desc_inv, sq_desc_len, sq_desc_rr_sink_stag, sq_desc_rr_size,
                  sq_desc_rr_src_stag;
wire [63:0]       sq_desc_to, sq_desc_rr_sink_to, sq_desc_rr_src_to;
wire [15:0]       sq_desc_mulpdu;
wire [CONN_W-1:0] sq_desc_conn;
wire [3:0]        rs_desc_opcode;
wire [31:0]       rs_desc_stag, rs_desc_msn, rs_desc_inv, rs_desc_len, rs_desc_rr_sink_stag, rs_desc_rr_size,
                  rs_desc_rr_src_stag;
wire [63:0]       rs_desc_to, rs_desc_rr_sink_to, rs_desc_rr_src_to;
wire [15:0]       rs_desc_mulpdu;
wire [CONN_W-1:0] rs_desc_conn;
assign txs_desc = {rs_desc_opcode, rs_desc_stag, rs_desc_to, rs_desc_msn, rs_desc_inv, rs_desc_len,
                   rs_desc_rr_sink_stag, rs_desc_rr_sink_to, rs_desc_rr_size, rs_desc_rr_src_stag, rs_desc_rr_src_to,
                   rs_desc_mulpdu, rs_desc_conn,
                   sq_desc_opcode, sq_desc_stag, sq_desc_to, sq_desc_msn, sq_desc_inv, sq_desc_len,
                   sq_desc_rr_sink_stag, sq_desc_rr_sink_to, sq_desc_rr_size, sq_desc_rr_src_stag, sq_desc_rr_src_to,
                   sq_desc_mulpdu, sq_desc_conn};
// A message has a payload frame when its length is not 0, but for a Read
// Request (rnic_tx's header).
localparam [3:0] OP_READ_REQUEST = 4'h1;   // RFC 5040 4.2
assign txs_pay = {rs_desc_len != 32'd0 && rs_desc_opcode != OP_READ_REQUEST,
                  sq_desc_len != 32'd0 && sq_desc_opcode != OP_READ_REQUEST};
// What rnic_tx takes.
wire              desc_valid, desc_ready, txp_valid, txp_ready, txp_last;
wire [DESC_W-1:0] desc;
wire [DATA_W-1:0] txp_data;
wire [DATA_W/8-1:0] txp_keep;
rnic_txarb #(.N(N_TX), .D_W(DESC_W), .DATA_W(DATA_W)) txarb (
    .clk(clk), .rst(rst),
    .s_desc_valid(txs_desc_valid), .s_desc_ready(txs_desc_ready), .s_desc(txs_desc), .s_desc_pay(txs_pay),
    .s_pay_data(txs_data), .s_pay_keep(txs_keep), .s_pay_valid(txs_valid), .s_pay_ready(txs_ready),
    .s_pay_last(txs_last),
    .m_desc_valid(desc_valid), .m_desc_ready(desc_ready), .m_desc(desc),
    .m_axis_tdata(txp_data), .m_axis_tkeep(txp_keep), .m_axis_tvalid(txp_valid), .m_axis_tready(txp_ready),
    .m_axis_tlast(txp_last)
);

wire              sq_cq_valid, sq_cq_ready, sq_ev_valid, sq_ev_ready;
wire              rr_done_valid, rr_done_ready;
wire [CONN_W-1:0] rr_done_qpn;
wire [CQ_W-1:0]   sq_cq_cqn;
wire [247:0]      sq_cq_entry;
wire [119:0]      sq_ev_entry;

// rnic_admin's QP context and MR read ports, shared (rnic_rdarb): client 0
// is rnic_sq (never kept waiting: its doorbell stage cannot wait), then
// rnic_rq, then (MR) rnic_rresp.
wire                sq_qp_rd_en, rq_qp_rd_req, sq_mr_rd_en, rq_mr_rd_req, rs_mr_rd_req;
wire [CONN_W-1:0]   sq_qp_rd_qpn, rq_qp_rd_qpn;
wire [STAG_AW-1:0]  sq_mr_rd_index, rq_mr_rd_index, rs_mr_rd_index;
// (Client 0's grant is not looked at: it is granted whenever it asks.)
/* verilator lint_off UNUSEDSIGNAL */
wire [2:0]          qparb_gnt;
wire [2:0]          mrarb_gnt;
/* verilator lint_on UNUSEDSIGNAL */
rnic_rdarb #(.N(3), .IDX_W(CONN_W)) qparb (
    .clk(clk), .rst(rst), .req({ow_rd_req, rq_qp_rd_req, sq_qp_rd_en}), .idx({ow_q_reg, rq_qp_rd_qpn, sq_qp_rd_qpn}),
    .gnt(qparb_gnt), .rd_en(qp_rd_en), .rd_index(qp_rd_qpn)
);
rnic_rdarb #(.N(3), .IDX_W(STAG_AW)) mrarb (
    .clk(clk), .rst(rst), .req({rs_mr_rd_req, rq_mr_rd_req, sq_mr_rd_en}),
    .idx({rs_mr_rd_index, rq_mr_rd_index, sq_mr_rd_index}), .gnt(mrarb_gnt), .rd_en(mr_rd_en), .rd_index(mr_rd_index)
);

// DMA read clients: 0 the SQ engine's WQE fetches, 1 its payload reads,
// 2 the RQ engine's WQE fetches, 3 the Read responder's source reads.
localparam N_RD = 4;
wire [N_RD-1:0]        rdc_req_valid, rdc_req_ready, rdc_valid, rdc_ready, rdc_last, rdc_err;
wire [N_RD*64-1:0]     rdc_req_addr;
wire [N_RD*32-1:0]     rdc_req_len;
wire [N_RD*3-1:0]      rdc_req_what;
wire [N_RD*DATA_W-1:0] rdc_data;
wire [N_RD*DATA_W/8-1:0] rdc_keep;

rnic_sq #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)
) sq (
    .clk(clk), .rst(rst),
    .sqdb_valid(sqdb_valid), .sqdb_qpn(qpdb_addr[14:3]), .sqdb_value(qpdb_wr_data),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_rd_en(sq_qp_rd_en), .qp_rd_qpn(sq_qp_rd_qpn), .qp_rd_state(qp_rd_state), .qp_rd_ctx(qp_rd_ctx),
    .rts_rd_en(rts_rd_en), .rts_rd_qpn(rts_rd_qpn), .rts_rd_params(rts_rd_params),
    .mr_rd_en(sq_mr_rd_en), .mr_rd_index(sq_mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    // A Read completes with its last Read Response (the receive side).
    .rr_done_valid(rr_done_valid), .rr_done_ready(rr_done_ready), .rr_done_qpn(rr_done_qpn), .rr_done_status(8'd0),
    .rr_done_layer_etype(8'd0), .rr_done_code(8'd0),
    // The RQ engine's and the Read responder's faults fail the QP here.
    .xfail_valid(xf_valid), .xfail_qpn(xf_rec[CONN_W-1:0]), .xfail_kind(xf_rec[CONN_W+27 -: 2]),
    .xfail_status(xf_rec[CONN_W+25 -: 8]), .xfail_target(xf_rec[CONN_W+17 -: 2]),
    .xfail_layer_etype(xf_rec[CONN_W+15 -: 8]), .xfail_code(xf_rec[CONN_W+7 -: 8]),
    .xfail_hdrct(xf_rec[XF_W-1 -: 3]), .xfail_seglen(xf_rec[XF_W-4 -: 16]), .xfail_ddp_hdr(xf_rec[XF_W-20 -: 144]),
    .xfail_rdma_hdr(xf_rec[XF_W-164 -: 224]),
    .qerr_valid(qerr_valid), .qerr_qpn(qerr_qpn), .qerr_status(qerr_status), .qerr_layer_etype(qerr_le),
    .qerr_code(qerr_code),
    .wqe_rd_req_valid(rdc_req_valid[0]), .wqe_rd_req_ready(rdc_req_ready[0]), .wqe_rd_req_addr(rdc_req_addr[63:0]),
    .wqe_rd_req_len(rdc_req_len[31:0]), .wqe_rd_req_what(rdc_req_what[2:0]),
    .wqe_rd_valid(rdc_valid[0]), .wqe_rd_ready(rdc_ready[0]), .wqe_rd_data(rdc_data[DATA_W-1:0]),
    .wqe_rd_keep(rdc_keep[DATA_W/8-1:0]), .wqe_rd_last(rdc_last[0]), .wqe_rd_err(rdc_err[0]),
    .pay_rd_req_valid(rdc_req_valid[1]), .pay_rd_req_ready(rdc_req_ready[1]), .pay_rd_req_addr(rdc_req_addr[127:64]),
    .pay_rd_req_len(rdc_req_len[63:32]), .pay_rd_req_what(rdc_req_what[5:3]),
    .pay_rd_valid(rdc_valid[1]), .pay_rd_ready(rdc_ready[1]), .pay_rd_data(rdc_data[2*DATA_W-1:DATA_W]),
    .pay_rd_keep(rdc_keep[DATA_W/4-1:DATA_W/8]), .pay_rd_last(rdc_last[1]), .pay_rd_err(rdc_err[1]),
    .tx_desc_valid(txs_desc_valid[0]), .tx_desc_ready(txs_desc_ready[0]), .tx_desc_opcode(sq_desc_opcode),
    .tx_desc_stag(sq_desc_stag), .tx_desc_to(sq_desc_to), .tx_desc_msn(sq_desc_msn), .tx_desc_inv_stag(sq_desc_inv),
    .tx_desc_len(sq_desc_len), .tx_desc_rr_sink_stag(sq_desc_rr_sink_stag), .tx_desc_rr_sink_to(sq_desc_rr_sink_to),
    .tx_desc_rr_size(sq_desc_rr_size), .tx_desc_rr_src_stag(sq_desc_rr_src_stag),
    .tx_desc_rr_src_to(sq_desc_rr_src_to), .tx_desc_mulpdu(sq_desc_mulpdu), .tx_desc_conn(sq_desc_conn),
    .tx_axis_tdata(txs_data[DATA_W-1:0]), .tx_axis_tkeep(txs_keep[DATA_W/8-1:0]), .tx_axis_tvalid(txs_valid[0]),
    .tx_axis_tready(txs_ready[0]), .tx_axis_tlast(txs_last[0]),
    .cq_valid(sq_cq_valid), .cq_ready(sq_cq_ready), .cq_cqn(sq_cq_cqn), .cq_entry(sq_cq_entry),
    .ev_valid(sq_ev_valid), .ev_ready(sq_ev_ready), .ev_entry(sq_ev_entry), .dropped_ev(),
    .ci_rd_qpn(drain_qpn), .ci_rd_value(drain_sq_ci)
);

// rnic_tx's connection configuration from each QP_RTS: marker position
// ((TX seq - TX marker base) mod 512) / 4, markers and CRC of the transmit
// half (flags bits 0 and 2), held until rnic_tx takes it.
reg              tcfg_valid_reg;
reg [CONN_W-1:0] tcfg_conn_reg;
reg [6:0]        tcfg_pos_reg;
reg              tcfg_mrk_reg, tcfg_crc_reg;
wire             tcfg_ready;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]      rts_off = qp_rts_params[127:96] - qp_rts_params[191:160];   // [8:2] used
/* verilator lint_on UNUSEDSIGNAL */
always @(posedge clk) begin
    if (qp_rts_valid) begin
        tcfg_valid_reg <= 1'b1;
        tcfg_conn_reg <= qp_rts_qpn;
        tcfg_pos_reg <= rts_off[8:2];
        tcfg_mrk_reg <= qp_rts_params[192];
        tcfg_crc_reg <= qp_rts_params[194];
    end else if (tcfg_ready) begin
        tcfg_valid_reg <= 1'b0;
    end
    if (rst) tcfg_valid_reg <= 1'b0;
end

wire [DATA_W-1:0]   fp_data;
wire [DATA_W/8-1:0] fp_keep;
wire                fp_valid, fp_ready, fp_last;
wire [CONN_W-1:0]   fp_conn;
rnic_tx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) tx (
    .clk(clk), .rst(rst),
    .s_desc_valid(desc_valid), .s_desc_ready(desc_ready), .s_desc_opcode(desc[DESC_W-1 -: 4]),
    .s_desc_stag(desc[DESC_W-5 -: 32]), .s_desc_to(desc[DESC_W-37 -: 64]), .s_desc_msn(desc[DESC_W-101 -: 32]),
    .s_desc_inv_stag(desc[DESC_W-133 -: 32]), .s_desc_len(desc[DESC_W-165 -: 32]),
    .s_desc_rr_sink_stag(desc[DESC_W-197 -: 32]), .s_desc_rr_sink_to(desc[DESC_W-229 -: 64]),
    .s_desc_rr_size(desc[DESC_W-293 -: 32]), .s_desc_rr_src_stag(desc[DESC_W-325 -: 32]),
    .s_desc_rr_src_to(desc[DESC_W-357 -: 64]), .s_desc_mulpdu(desc[DESC_W-421 -: 16]),
    .s_desc_conn(desc[CONN_W-1:0]),
    .s_axis_tdata(txp_data), .s_axis_tkeep(txp_keep), .s_axis_tvalid(txp_valid), .s_axis_tready(txp_ready),
    .s_axis_tlast(txp_last),
    .cfg_valid(tcfg_valid_reg), .cfg_ready(tcfg_ready), .cfg_conn(tcfg_conn_reg), .cfg_pos(tcfg_pos_reg),
    .cfg_mrk_en(tcfg_mrk_reg), .cfg_crc_en(tcfg_crc_reg),
    // The device's QP setup (QP_RTS) does not carry the TUF mode and key
    // yet: every connection is MPA.
    .cfg_tuf(1'b0), .cfg_key(48'd0),
    .m_axis_tdata(fp_data), .m_axis_tkeep(fp_keep), .m_axis_tvalid(fp_valid), .m_axis_tready(fp_ready),
    .m_axis_tlast(fp_last), .m_axis_tuser(fp_conn),
    // rnic_sq hands rnic_tx only descriptors the model accepts (its own
    // checks come first) and MULPDUs from QP_RTS (at most 64768, checked
    // by rnic_admin): neither error can happen here.
    .ddp_err_valid(), .ddp_err_code(), .ddp_err_conn(), .mpa_err_valid(), .mpa_err_code(),
    .tuf_err_valid(), .tuf_err_code()
);

// The FPDUs onto the network seam, each a segment with the connection's
// next transmit sequence number (set by QP_RTS, advanced by each FPDU's
// octets). rnic_tx interleaves connections only between FPDUs.
reg  [31:0]       txseq_mem [0:(1<<CONN_W)-1];
reg  [31:0]       fp_start_reg;  // the current FPDU's first sequence number
reg  [31:0]       fp_cnt_reg;    // its octets so far
reg               fp_mid_reg;    // inside an FPDU
function automatic [31:0] popcount_keep(input [DATA_W/8-1:0] k);
    integer i;
    begin
        popcount_keep = 32'd0;
        for (i = 0; i < DATA_W/8; i = i + 1) popcount_keep = popcount_keep + {31'd0, k[i]};
    end
endfunction
wire [31:0] fp_seq = fp_mid_reg ? fp_start_reg : txseq_mem[fp_conn];
wire [31:0] fp_octets = popcount_keep(fp_keep);
wire [31:0] fp_total = (fp_mid_reg ? fp_cnt_reg : 32'd0) + fp_octets;
always @(posedge clk) begin
    if (fp_valid && fp_ready) begin
        fp_start_reg <= fp_seq;
        fp_cnt_reg <= fp_total;
        fp_mid_reg <= !fp_last;
        if (fp_last) txseq_mem[fp_conn] <= fp_seq + fp_total;
    end
    if (qp_rts_valid) txseq_mem[qp_rts_qpn] <= qp_rts_params[127:96];
    if (rst) fp_mid_reg <= 1'b0;
end
assign m_net_tdata = fp_data;
assign m_net_tkeep = fp_keep;
assign m_net_tvalid = fp_valid;
assign m_net_tlast = fp_last;
assign fp_ready = m_net_tready;
// tuser {qpn, seq, len}: the sequence number of the segment's first
// octet; len is 0 on the way out (the frame's end says).
assign m_net_tuser = {{(16-CONN_W){1'b0}}, fp_conn, fp_seq, 16'd0};

// --- completions, events, interrupts ------------------------------------------

wire            cq_ev_valid, cq_ev_ready, cq_int_valid;
wire [119:0]    cq_ev_entry;
wire [VEC_W-1:0] cq_int_vector;
wire            evq_int_valid;
wire [31:0]     evq_lost;
// DMA write clients: 0 the CQ writer, 1 the event writer, 2 the exception
// ring writer.
localparam N_WR = 3;
wire [N_WR-1:0]        wrc_req_valid, wrc_req_ready, wrc_valid, wrc_ready, wrc_last;
wire [N_WR-1:0]        wrc_done_valid, wrc_done_ready, wrc_done_err;
wire [N_WR*64-1:0]     wrc_req_addr;
wire [N_WR*32-1:0]     wrc_req_len;
wire [N_WR*3-1:0]      wrc_req_what;
wire [N_WR*DATA_W-1:0] wrc_data;
wire [N_WR*DATA_W/8-1:0] wrc_keep;

// Completion records: rnic_sq's (send CQs) and rnic_rq's (receive CQs),
// merged round robin; each engine's own records keep their order.
wire              rq_cq_valid, rq_cq_ready, cqm_valid, cqm_ready;
wire [CQ_W-1:0]   rq_cq_cqn;
wire [247:0]      rq_cq_entry;
wire [CQ_W+247:0] cqm_rec;
rnic_recmux #(.N(2), .W(CQ_W + 248)) cqmux (
    .clk(clk), .rst(rst), .s_valid({rq_cq_valid, sq_cq_valid}), .s_ready({rq_cq_ready, sq_cq_ready}),
    .s_data({rq_cq_cqn, rq_cq_entry, sq_cq_cqn, sq_cq_entry}), .m_valid(cqm_valid), .m_ready(cqm_ready),
    .m_data(cqm_rec)
);
rnic_cq #(.DATA_W(DATA_W), .CQ_W(CQ_W), .VEC_W(VEC_W)) cq (
    .clk(clk), .rst(rst),
    .cq_valid(cqm_valid), .cq_ready(cqm_ready), .cq_cqn(cqm_rec[CQ_W+247:248]), .cq_entry(cqm_rec[247:0]),
    .cqdb_valid(cqdb_valid), .cqdb_cqn(cqdb_addr[13:2]), .cqdb_value(cqdb_wr_data),
    .cq_cfg_valid(cq_cfg_valid), .cq_cfg_cqn(cq_cfg_cqn), .cq_cfg_create(cq_cfg_create),
    .cq_rd_en(cq_rd_en), .cq_rd_cqn(cq_rd_cqn), .cq_rd_valid(cq_rd_valid), .cq_rd_ctx(cq_rd_ctx),
    .wr_req_valid(wrc_req_valid[0]), .wr_req_ready(wrc_req_ready[0]), .wr_req_addr(wrc_req_addr[63:0]),
    .wr_req_len(wrc_req_len[31:0]), .wr_req_what(wrc_req_what[2:0]),
    .wr_valid(wrc_valid[0]), .wr_ready(wrc_ready[0]), .wr_data(wrc_data[DATA_W-1:0]),
    .wr_keep(wrc_keep[DATA_W/8-1:0]), .wr_last(wrc_last[0]),
    .wr_done_valid(wrc_done_valid[0]), .wr_done_ready(wrc_done_ready[0]), .wr_done_err(wrc_done_err[0]),
    .ev_valid(cq_ev_valid), .ev_ready(cq_ev_ready), .ev_entry(cq_ev_entry),
    // An overrun CQ moves the QPs completing into it to the error state
    // (the walk beside xfmux).
    .cq_ovf_valid(cq_ovf_valid), .cq_ovf_ready(cq_ovf_ready), .cq_ovf_cqn(cq_ovf_cqn),
    .int_valid(cq_int_valid), .int_vector(cq_int_vector), .lost(), .ev_lost()
);

// DMA refusals as DMA_REFUSED events (docs/device.md: detail = what for,
// index none, value = the length, the address).
wire        rrd_valid, rrd_ready, rwr_valid, rwr_ready;
wire [2:0]  rrd_what, rwr_what;
wire [63:0] rrd_addr, rwr_addr;
wire [31:0] rrd_len, rwr_len;
/* verilator lint_off UNUSEDSIGNAL */
function automatic [119:0] refused_event(input [2:0] what, input [63:0] addr, input [31:0] len);
    refused_event = {addr[55:0], len, 16'hffff, 5'd0, what, 8'd7};   // an address of 56 bits
endfunction
/* verilator lint_on UNUSEDSIGNAL */

// The write engine's client refusals are not events of their own: its
// clients are the CQ writer, which raises a refused CQE's DMA_REFUSED
// itself (with the cqn), and the event writer, whose refused write has no
// event ring to be told on (rnic_evq counts it lost). A refused placement
// burst (pref_*: its beats' address and octets) is a DMA_REFUSED for
// placement (what 4; the qpn is not known there: 0xffff).
assign rwr_ready = 1'b1;
wire        pref_valid, pref_ready;
wire [63:0] pref_addr;
wire [31:0] pref_len;
localparam [2:0] FOR_PLACEMENT = 3'd4;   // hostif.DMAForPlacement

wire         rq_ev_valid, rq_ev_ready, exc_ev_valid, exc_ev_ready;
wire [119:0] rq_ev_entry, exc_ev_entry;
rnic_evq #(.DATA_W(DATA_W), .N_SRC(6)) evq (
    .clk(clk), .rst(rst),
    .ev_valid({pref_valid, exc_ev_valid, rq_ev_valid, rrd_valid, cq_ev_valid, sq_ev_valid}),
    .ev_ready({pref_ready, exc_ev_ready, rq_ev_ready, rrd_ready, cq_ev_ready, sq_ev_ready}),
    .ev_entry({refused_event(FOR_PLACEMENT, pref_addr, pref_len), exc_ev_entry, rq_ev_entry,
               refused_event(rrd_what, rrd_addr, rrd_len), cq_ev_entry, sq_ev_entry}),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_ring(evr_ring), .evr_log2(evr_log2),
    .wr_req_valid(wrc_req_valid[1]), .wr_req_ready(wrc_req_ready[1]), .wr_req_addr(wrc_req_addr[127:64]),
    .wr_req_len(wrc_req_len[63:32]), .wr_req_what(wrc_req_what[5:3]),
    .wr_valid(wrc_valid[1]), .wr_ready(wrc_ready[1]), .wr_data(wrc_data[2*DATA_W-1:DATA_W]),
    .wr_keep(wrc_keep[DATA_W/4-1:DATA_W/8]), .wr_last(wrc_last[1]),
    .wr_done_valid(wrc_done_valid[1]), .wr_done_ready(wrc_done_ready[1]), .wr_done_err(wrc_done_err[1]),
    .int_valid(evq_int_valid), .lost_count(evq_lost)
);

wire             irq_valid, irq_ready;
wire [VEC_W-1:0] irq_vector;
wire             vec_rd_ack, vec_wr_ack;
wire [31:0]      vec_rd_data;
rnic_irq #(.VEC_W(VEC_W), .N_SRC(2)) irq (
    .clk(clk), .rst(rst),
    .vec_req(vec_req), .vec_addr(vec_addr), .vec_req_is_wr(vec_is_wr), .vec_wr_data(vec_wr_data),
    .vec_wr_biten(vec_wr_biten), .vec_rd_ack(vec_rd_ack), .vec_rd_data(vec_rd_data), .vec_wr_ack(vec_wr_ack),
    .int_valid({evq_int_valid, cq_int_valid}), .int_vector({{VEC_W{1'b0}}, cq_int_vector}),
    .irq_valid(irq_valid), .irq_ready(irq_ready), .irq_vector(irq_vector)
);
assign m_irq_valid = irq_valid;
assign irq_ready = m_irq_ready;
assign m_irq_vector = {{(4-VEC_W){1'b0}}, irq_vector};

// --- DMA ------------------------------------------------------------------------

rnic_dma_rd #(.DATA_W(DATA_W), .N_RD(N_RD), .WIN_W(WIN_W), .ID_W(AXI_ID_W)) dma_rd (
    .clk(clk), .rst(rst),
    .rd_req_valid(rdc_req_valid), .rd_req_ready(rdc_req_ready), .rd_req_addr(rdc_req_addr),
    .rd_req_len(rdc_req_len), .rd_req_what(rdc_req_what),
    .rd_valid(rdc_valid), .rd_ready(rdc_ready), .rd_data(rdc_data), .rd_keep(rdc_keep), .rd_last(rdc_last),
    .rd_err(rdc_err),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len),
    .ref_valid(rrd_valid), .ref_ready(rrd_ready), .ref_what(rrd_what), .ref_addr(rrd_addr), .ref_len(rrd_len),
    .m_axi_arid(m_axi_arid), .m_axi_araddr(m_axi_araddr), .m_axi_arlen(m_axi_arlen), .m_axi_arsize(m_axi_arsize),
    .m_axi_arburst(m_axi_arburst), .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(),
    .m_axi_arvalid(m_axi_arvalid), .m_axi_arready(m_axi_arready),
    .m_axi_rid(m_axi_rid), .m_axi_rdata(m_axi_rdata), .m_axi_rresp(m_axi_rresp), .m_axi_rlast(m_axi_rlast),
    .m_axi_rvalid(m_axi_rvalid), .m_axi_rready(m_axi_rready)
);

rnic_dma_wr #(.DATA_W(DATA_W), .N_WR(N_WR), .WIN_W(WIN_W), .ID_W(AXI_ID_W)) dma_wr (
    .clk(clk), .rst(rst),
    .wr_req_valid(wrc_req_valid), .wr_req_ready(wrc_req_ready), .wr_req_addr(wrc_req_addr),
    .wr_req_len(wrc_req_len), .wr_req_what(wrc_req_what),
    .wr_valid(wrc_valid), .wr_ready(wrc_ready), .wr_data(wrc_data), .wr_keep(wrc_keep), .wr_last(wrc_last),
    .wr_done_valid(wrc_done_valid), .wr_done_ready(wrc_done_ready), .wr_done_err(wrc_done_err),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len),
    .ref_valid(rwr_valid), .ref_ready(rwr_ready), .ref_what(rwr_what), .ref_addr(rwr_addr), .ref_len(rwr_len),
    .pref_valid(pref_valid), .pref_ready(pref_ready), .pref_addr(pref_addr), .pref_len(pref_len),
    // The placement writes (ddp_rx's AXI4 master, through rnic_rx and
    // rnic_axisink).
    .s_axi_awid(px_awid), .s_axi_awaddr(px_awaddr), .s_axi_awlen(px_awlen), .s_axi_awsize(px_awsize),
    .s_axi_awburst(px_awburst), .s_axi_awcache(px_awcache), .s_axi_awprot(px_awprot), .s_axi_awvalid(px_awvalid),
    .s_axi_awready(px_awready), .s_axi_wdata(px_wdata), .s_axi_wstrb(px_wstrb), .s_axi_wlast(px_wlast),
    .s_axi_wvalid(px_wvalid), .s_axi_wready(px_wready), .s_axi_bid(px_bid), .s_axi_bresp(px_bresp),
    .s_axi_bvalid(px_bvalid), .s_axi_bready(px_bready),
    .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen), .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst), .m_axi_awlock(), .m_axi_awcache(), .m_axi_awprot(),
    .m_axi_awvalid(m_axi_awvalid), .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb), .m_axi_wlast(m_axi_wlast), .m_axi_wvalid(m_axi_wvalid),
    .m_axi_wready(m_axi_wready), .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready)
);

// --- the receive side: m_net -> rnic_rx -> placement --------------------------
//
// rnic_rx takes the seam's segments (s_net), checks and places them through
// ddp_rx's STag table, written from MR_WRITE and MR_INVALIDATE, on the
// connections QP_RTS enables, into the receive buffers rnic_rq and
// rnic_rresp post; its placement writes go out through rnic_axisink and
// rnic_dma_wr's pass-through port; what it does not take in order goes to
// the exception ring (rnic_exc). The errors of the peer's stream (m_err)
// and its Terminates fail the QP (xfmux).

// Configuration queues: rnic_admin's pulses, taken by rnic_rx and ddp_rx
// when they are ready (their fences may hold them). A driver issues one
// command at a time, each takes 2^WIN_W + 4 clocks or more, so a few
// entries are plenty; a full queue is a device bug and stops the clock
// check in simulation.
localparam CFGQ_LOG2 = 3;
// QP context the receive side needs: the PD (CREATE_QP).
reg  [15:0] qp_pd_mem [0:(1<<CONN_W)-1];
always @(posedge clk) if (qp_state_wr_valid && qp_state_wr_state == 2'd1) qp_pd_mem[qp_state_wr_qpn] <= qp_state_wr_pd;
// rnic_rx's cfg and ddp_rx's s_conn, one record each per QP_RTS (enable)
// and per QP_DRAIN / DESTROY_QP (disable):
// {conn, enable, mrk_en, crc_en, base, pd}
localparam CFGR_W = CONN_W + 3 + 32 + 16;
wire               rts_go = qp_rts_valid;
wire               dis_go = qp_state_wr_valid && (qp_state_wr_state == 2'd3 || qp_state_wr_state == 2'd0);
// A QP that enters the error state (rnic_sq's qerr) has ddp_rx place
// nothing more for it (the model's r.sink.Fail) and its later segments go
// to the exception ring, reason in error (the model's segIn): a record
// {conn, enable 0, mrk_en 1}, a disable for ddp_rx and rnic_rx's fail_*
// (mpa_rx marks the connection in error), queued in a clock without an
// admin record (a bit a QP until then).
reg  [(1<<CONN_W)-1:0] qfd_pend_reg;
reg                qfd_v;
reg  [CONN_W-1:0]  qfd_q;
integer            qfd_i;
always @* begin
    qfd_v = 1'b0;
    qfd_q = {CONN_W{1'b0}};
    for (qfd_i = (1 << CONN_W) - 1; qfd_i >= 0; qfd_i = qfd_i - 1) begin
        if (qfd_pend_reg[qfd_i]) begin
            qfd_v = 1'b1;
            qfd_q = qfd_i[CONN_W-1:0];
        end
    end
end
wire               fd_go = qfd_v && !rts_go && !dis_go;
wire [CFGR_W-1:0]  cfgr_in = rts_go ? {qp_rts_qpn, 1'b1, qp_rts_params[193], qp_rts_params[195], qp_rts_params[159:128],
                                       qp_pd_mem[qp_rts_qpn]}
                           : dis_go ? {qp_state_wr_qpn, 3'b000, 32'd0, 16'd0}
                                    : {qfd_q, 3'b010, 32'd0, 16'd0};
reg  [CFGR_W-1:0]  rcfg_q [0:(1<<CFGQ_LOG2)-1];
reg  [CFGQ_LOG2:0] rcfg_wp_reg, rcfg_rp_reg, ccfg_rp_reg;
/* verilator lint_off UNUSEDSIGNAL */
wire [CFGR_W-1:0]  rcfg_head = rcfg_q[rcfg_rp_reg[CFGQ_LOG2-1:0]];   // rnic_rx: all but the PD
wire [CFGR_W-1:0]  ccfg_head = rcfg_q[ccfg_rp_reg[CFGQ_LOG2-1:0]];   // ddp_rx: conn, enable, PD
/* verilator lint_on UNUSEDSIGNAL */
wire               rcfg_any = rcfg_rp_reg != rcfg_wp_reg;
wire               rcfg_fail = rcfg_any && !rcfg_head[50] && rcfg_head[49];   // rnic_rx's fail_*
wire               rcfg_valid = rcfg_any && !rcfg_fail;
wire               rfail_ready;
wire               ccfg_valid = ccfg_rp_reg != rcfg_wp_reg;
wire               rcfg_ready, ccfg_ready;
always @(posedge clk) begin
    if (rts_go || dis_go || fd_go) begin
        rcfg_q[rcfg_wp_reg[CFGQ_LOG2-1:0]] <= cfgr_in;
        rcfg_wp_reg <= rcfg_wp_reg + 1'b1;
    end
    if (fd_go) qfd_pend_reg[qfd_q] <= 1'b0;
    if (qerr_valid) qfd_pend_reg[qerr_qpn] <= 1'b1;
    if ((rcfg_valid && rcfg_ready) || (rcfg_fail && rfail_ready)) rcfg_rp_reg <= rcfg_rp_reg + 1'b1;
    if (ccfg_valid && ccfg_ready) ccfg_rp_reg <= ccfg_rp_reg + 1'b1;
    if (rst) begin
        qfd_pend_reg <= 0;
        rcfg_wp_reg <= 0;
        rcfg_rp_reg <= 0;
        ccfg_rp_reg <= 0;
    end
end
// ddp_rx's STag table: {index, entry_valid, key, pd, bound, conn, access, base, len, addr}
localparam STGR_W = STAG_AW + 1 + 8 + 16 + 1 + CONN_W + 2 + 64 + 32 + 64;
// A region longer than ddp_rx's 32-bit length is entered with the largest
// length it holds: a smaller bound refuses more, never writes outside.
wire [31:0]        mr_len32 = |mr_wr_len[63:32] ? 32'hffffffff : mr_wr_len[31:0];
wire [STGR_W-1:0]  stgr_in = mr_wr_valid
    ? {mr_wr_index, 1'b1, mr_wr_key, mr_wr_pd, mr_wr_bound != 16'hffff, mr_wr_bound[CONN_W-1:0],
       mr_wr_access[2], mr_wr_access[3], mr_wr_base_to, mr_len32, mr_wr_addr}
    : {mr_inv_index, 1'b0, {(STGR_W-STAG_AW-1){1'b0}}};
reg  [STGR_W-1:0]  stg_q [0:(1<<CFGQ_LOG2)-1];
reg  [CFGQ_LOG2:0] stg_wp_reg, stg_rp_reg;
wire [STGR_W-1:0]  stg_head = stg_q[stg_rp_reg[CFGQ_LOG2-1:0]];
wire               stg_valid = stg_rp_reg != stg_wp_reg;
wire               stg_ready;
always @(posedge clk) begin
    if (mr_wr_valid || mr_inv_valid) begin
        stg_q[stg_wp_reg[CFGQ_LOG2-1:0]] <= stgr_in;
        stg_wp_reg <= stg_wp_reg + 1'b1;
    end
    if (stg_valid && stg_ready) stg_rp_reg <= stg_rp_reg + 1'b1;
    if (rst) begin
        stg_wp_reg <= 0;
        stg_rp_reg <= 0;
    end
end
// (The pulses count too: in their clock the queues are not yet written.)
assign dp_busy = rcfg_any || ccfg_valid || stg_valid || rts_go || dis_go || mr_wr_valid || mr_inv_valid;
`ifndef SYNTHESIS
// (The fill levels in the pointers' width: they wrap.)
wire [CFGQ_LOG2:0] rcfg_fill = rcfg_wp_reg - rcfg_rp_reg, ccfg_fill = rcfg_wp_reg - ccfg_rp_reg,
                   stg_fill = stg_wp_reg - stg_rp_reg;
always @(posedge clk) begin
    if (!rst && (rcfg_fill > (1 << CFGQ_LOG2) || ccfg_fill > (1 << CFGQ_LOG2) || stg_fill > (1 << CFGQ_LOG2))) begin
        $error("rnic_dev: a configuration queue of the receive side overflowed");
        $finish;
    end
end
`endif

wire [0:0]          pl_awid, pl_bid;
wire [63:0]         pl_awaddr;
wire [7:0]          pl_awlen;
wire [2:0]          pl_awsize, pl_awprot;
wire [1:0]          pl_awburst, pl_bresp;
wire [3:0]          pl_awcache;
wire                pl_awvalid, pl_awready, pl_wlast, pl_wvalid, pl_wready, pl_bvalid, pl_bready;
wire [DATA_W-1:0]   pl_wdata;
wire [DATA_W/8-1:0] pl_wstrb;
// Past rnic_axisink: the bursts into host memory.
wire [0:0]          px_awid, px_bid;
wire [63:0]         px_awaddr;
wire [7:0]          px_awlen;
wire [2:0]          px_awsize, px_awprot;
wire [1:0]          px_awburst, px_bresp;
wire [3:0]          px_awcache;
wire                px_awvalid, px_awready, px_wlast, px_wvalid, px_wready, px_bvalid, px_bready;
wire [DATA_W-1:0]   px_wdata;
wire [DATA_W/8-1:0] px_wstrb;
// The device's own receive buffers (bit 63 set) end in rnic_axisink.
rnic_axisink #(.DATA_W(DATA_W), .ID_W(1)) axisink (
    .clk(clk), .rst(rst),
    .s_axi_awid(pl_awid), .s_axi_awaddr(pl_awaddr), .s_axi_awlen(pl_awlen), .s_axi_awsize(pl_awsize),
    .s_axi_awburst(pl_awburst), .s_axi_awcache(pl_awcache), .s_axi_awprot(pl_awprot), .s_axi_awvalid(pl_awvalid),
    .s_axi_awready(pl_awready), .s_axi_wdata(pl_wdata), .s_axi_wstrb(pl_wstrb), .s_axi_wlast(pl_wlast),
    .s_axi_wvalid(pl_wvalid), .s_axi_wready(pl_wready), .s_axi_bid(pl_bid), .s_axi_bresp(pl_bresp),
    .s_axi_bvalid(pl_bvalid), .s_axi_bready(pl_bready),
    .m_axi_awid(px_awid), .m_axi_awaddr(px_awaddr), .m_axi_awlen(px_awlen), .m_axi_awsize(px_awsize),
    .m_axi_awburst(px_awburst), .m_axi_awcache(px_awcache), .m_axi_awprot(px_awprot), .m_axi_awvalid(px_awvalid),
    .m_axi_awready(px_awready), .m_axi_wdata(px_wdata), .m_axi_wstrb(px_wstrb), .m_axi_wlast(px_wlast),
    .m_axi_wvalid(px_wvalid), .m_axi_wready(px_wready), .m_axi_bid(px_bid), .m_axi_bresp(px_bresp),
    .m_axi_bvalid(px_bvalid), .m_axi_bready(px_bready)
);

// ddp_rx's completions, by kind: a Read Response's last segment completes
// the QP's oldest Read (rnic_sq); a Send (queue 0) the oldest posted
// receive (rnic_rq); a Read Request (queue 1) goes to the Read responder.
// An RDMA Write's needs nothing; a Terminate (queue 2) fails the QP
// (xfmux: TERMINATE_RECEIVED, status REMOTE).
wire               cpl_valid, cpl_ready, cpl_tagged;
wire [CONN_W-1:0]  cpl_conn;
wire [3:0]         cpl_opcode;
wire [1:0]         cpl_qn;
wire [31:0]        cpl_msn, cpl_len, cpl_inv_stag;
wire [63:0]        cpl_id;
wire [223:0]       cpl_rr;
localparam [3:0]   OP_READ_RESPONSE = 4'h2;   // RFC 5040 4.2
wire               cpl_rresp = cpl_tagged && cpl_opcode == OP_READ_RESPONSE;
wire               cpl_send = !cpl_tagged && cpl_qn == 2'd0;
wire               cpl_rreq = !cpl_tagged && cpl_qn == 2'd1;
wire               rcpl_ready, rreq_ready;
assign rr_done_valid = cpl_valid && cpl_rresp;
assign rr_done_qpn = cpl_conn;
assign cpl_ready = cpl_rresp ? rr_done_ready : cpl_send ? rcpl_ready : cpl_rreq ? rreq_ready :
                   cpl_term ? rxt_ready : 1'b1;

// The QP failures (the model's fail() and its fault kinds), one at a time
// into rnic_sq's xfail (no ready: the merge's output is always taken), as
// {kind, status, target, layer/etype, code, qpn}: kind 0 a local fault
// (Terminate of Local Catastrophic), 1 an error in the peer's stream (the
// Terminate names it; the target's status PROTOCOL, or CONN for an MPA
// error), 2 the peer's Terminate (TERMINATE_RECEIVED, status REMOTE, none
// sent); target 1 the oldest unanswered Read, 2 the oldest posted receive.
// Sources: rnic_rq's and rnic_rresp's fail_* (fail_local 0: rnic_rresp's
// protection errors, the Read Request's, no target), ddp_rx's m_err and
// its Terminates (m_cpl on queue 2).
// Above those, what the Terminate copies (RFC 5040 4.8: rnic_sq's
// xfail_hdrct {M, D, R}, seglen, ddp_hdr, rdma_hdr): ddp_rx's m_err gives
// M and D, the Read responder's fail_* all three; the others none.
localparam XF_W = 3 + 16 + 144 + 224 + 2 + 8 + 2 + 8 + 8 + CONN_W;
localparam XF_T0 = {3'd0, 16'd0, 144'd0, 224'd0};
localparam [7:0] ST_REMOTE = 8'd4, ST_PROTOCOL = 8'd5, ST_CONN = 8'd6;   // docs/device.md, CQE status
wire              rq_fail_valid, rq_fail_ready, rs_fail_valid, rs_fail_ready, xf_valid;
wire [CONN_W-1:0] rq_fail_qpn, rs_fail_qpn;
wire              rq_fail_local, rs_fail_local;
wire [7:0]        rq_fail_le, rq_fail_code, rs_fail_le, rs_fail_code;
wire [XF_W-1:0]   xf_rec;
wire [2:0]        rs_fail_hdrct;
wire [15:0]       rs_fail_seglen;
wire [143:0]      rs_fail_ddp_hdr;
wire [223:0]      rs_fail_rdma_hdr;
wire              qerr_valid;
wire [CONN_W-1:0] qerr_qpn;
wire [7:0]        qerr_status, qerr_le, qerr_code;
wire              rxe_ready, rxt_ready;
wire              rx_err_valid;
wire [CONN_W-1:0] rx_err_conn;
wire [3:0]        rx_err_layer, rx_err_etype;
wire [7:0]        rx_err_code;
wire [1:0]        rx_err_hdrct;
wire [15:0]       rx_err_seglen;
wire [143:0]      rx_err_hdr;
// ddp_rx's m_err: the erring ULPDU's opcode is on m_cpl_opcode/m_cpl_tagged
// with it (ddp_rx's delivery record, the same registers): a Read Response's
// error goes to the oldest Read, a Send's to the oldest receive (fail()'s
// target by r.rxOp). Layer 2 (LLP): MPA broke the stream, status CONN.
wire [1:0]        rxe_target = (cpl_tagged && cpl_opcode == OP_READ_RESPONSE) ? 2'd1
                             : (!cpl_tagged && cpl_opcode >= 4'd3 && cpl_opcode <= 4'd6) ? 2'd2 : 2'd0;
wire [XF_W-1:0]   rxe_rec = {rx_err_hdrct, 1'b0, rx_err_seglen, rx_err_hdr, 224'd0, 2'd1, rx_err_layer == 4'd2 ? ST_CONN : ST_PROTOCOL, rxe_target,
                             rx_err_layer, rx_err_etype, rx_err_code, rx_err_conn};
// The peer's Terminate: its Terminate Control's first two octets (layer
// and etype, code) are the message's payload octets 0..1, in m_cpl_rr
// (ddp_rx captures octets 18.. of the ULPDU, RFC 5040 6.1).
wire              cpl_term = !cpl_tagged && cpl_qn == 2'd2;
wire [XF_W-1:0]   rxt_rec = {XF_T0, 2'd2, ST_REMOTE, 2'd0, cpl_rr[7:0], cpl_rr[15:8], cpl_conn};
// A CQ overrun (rnic_cq's cq_ovf) fails every QP that completes into the
// CQ as a local fault (the model's complete()): a walk over the QPs'
// contexts (qparb client 2), a fail record for each whose send or receive
// CQ it is (rnic_sq acts on those in RTS), cq_ovf_ready once done (rnic_cq
// takes no record until then).
localparam [1:0]  OW_IDLE = 2'd0, OW_REQ = 2'd1, OW_CMP = 2'd2, OW_FAIL = 2'd3;
reg  [1:0]        ow_st_reg;
reg  [CQ_W-1:0]   ow_cq_reg;
reg  [CONN_W-1:0] ow_q_reg;
wire              cq_ovf_valid, ow_fail_ready;
wire [CQ_W-1:0]   cq_ovf_cqn;
wire              ow_rd_req = ow_st_reg == OW_REQ;
wire              ow_last = ow_q_reg == {CONN_W{1'b1}};
wire              ow_hit = qp_rd_ctx[2*CQ_W-1:CQ_W] == ow_cq_reg || qp_rd_ctx[CQ_W-1:0] == ow_cq_reg;
always @(posedge clk) begin
    case (ow_st_reg)
    OW_IDLE: if (cq_ovf_valid) begin
        ow_cq_reg <= cq_ovf_cqn;
        ow_q_reg <= {CONN_W{1'b0}};
        ow_st_reg <= OW_REQ;
    end
    OW_REQ: if (qparb_gnt[2]) ow_st_reg <= OW_CMP;
    OW_CMP: begin
        if (ow_hit) ow_st_reg <= OW_FAIL;
        else if (ow_last) ow_st_reg <= OW_IDLE;
        else ow_st_reg <= OW_REQ;
        if (!ow_hit) ow_q_reg <= ow_q_reg + 1'b1;
    end
    default: if (ow_fail_ready) begin   // OW_FAIL
        ow_q_reg <= ow_q_reg + 1'b1;
        ow_st_reg <= ow_last ? OW_IDLE : OW_REQ;
    end
    endcase
    if (rst) ow_st_reg <= OW_IDLE;
end
// (cq_ovf_ready in the clock the walk ends: rnic_cq holds the request
// until then, and takes the next overrun only after.)
wire              cq_ovf_ready = (ow_st_reg == OW_CMP && !ow_hit && ow_last) ||
                                 (ow_st_reg == OW_FAIL && ow_fail_ready && ow_last);
rnic_recmux #(.N(5), .W(XF_W)) xfmux (
    .clk(clk), .rst(rst),
    .s_valid({ow_st_reg == OW_FAIL, cpl_valid && cpl_term, rx_err_valid, rs_fail_valid, rq_fail_valid}),
    .s_ready({ow_fail_ready, rxt_ready, rxe_ready, rs_fail_ready, rq_fail_ready}),
    .s_data({{XF_T0, 2'd0, 8'd0, 2'd0, 8'd0, 8'd0, ow_q_reg}, rxt_rec, rxe_rec,
             {rs_fail_hdrct, rs_fail_seglen, rs_fail_ddp_hdr, rs_fail_rdma_hdr, 1'b0, !rs_fail_local, ST_PROTOCOL,
              2'd0, rs_fail_le, rs_fail_code, rs_fail_qpn},
             {XF_T0, 1'b0, !rq_fail_local, ST_PROTOCOL, 2'd0, rq_fail_le, rq_fail_code, rq_fail_qpn}}),
    .m_valid(xf_valid), .m_ready(1'b1), .m_data(xf_rec)
);

// ddp_rx's post ring per (connection, queue) is 2^POST_LOG2 deep (rnic_rx's
// RQ_AW), and rnic_rq and rnic_rresp keep at most that many buffers of one
// (QP, queue) posted (their POST_DEPTH_LOG2): the three must agree. With
// rnic_rx's default RQ_AW 3 under their default 16, the posts beyond 8 were
// refused (m_post_err, unconnected) and the 9th outstanding Send or Read
// Request found no buffer (issue 30; driver/simdev TestSimSixteenOutstanding).
localparam POST_LOG2 = 4;

// The RQ engine: RQ doorbells, RQ entries fetched and checked, posted to
// ddp_rx's queue 0; the Sends' completions into receive CQEs.
wire              rq_inv_valid;
wire [STAG_AW-1:0] rq_inv_index;
wire              rq_post_valid, rq_post_ready, rs_post_valid, rs_post_ready;
wire [(1<<CONN_W)-1:0] rq_rx_hold, rs_rx_hold;
wire [CONN_W+2+64+32+64-1:0] rq_post, rs_post;
rnic_rq #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2), .POST_DEPTH_LOG2(POST_LOG2)
) rq (
    .clk(clk), .rst(rst),
    .rqdb_valid(rqdb_valid), .rqdb_qpn(qpdb_addr[14:3]), .rqdb_value(qpdb_wr_data), .dropped_db(),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len),
    .qp_rd_req(rq_qp_rd_req), .qp_rd_gnt(qparb_gnt[1]), .qp_rd_qpn(rq_qp_rd_qpn), .qp_rd_state(qp_rd_state),
    .qp_rd_ctx(qp_rd_ctx),
    .mr_rd_req(rq_mr_rd_req), .mr_rd_gnt(mrarb_gnt[1]), .mr_rd_index(rq_mr_rd_index), .mr_rd_valid(mr_rd_valid),
    .mr_rd_entry(mr_rd_entry),
    .wqe_rd_req_valid(rdc_req_valid[2]), .wqe_rd_req_ready(rdc_req_ready[2]), .wqe_rd_req_addr(rdc_req_addr[191:128]),
    .wqe_rd_req_len(rdc_req_len[95:64]), .wqe_rd_req_what(rdc_req_what[8:6]),
    .wqe_rd_valid(rdc_valid[2]), .wqe_rd_ready(rdc_ready[2]), .wqe_rd_data(rdc_data[3*DATA_W-1:2*DATA_W]),
    .wqe_rd_keep(rdc_keep[3*DATA_W/8-1:DATA_W/4]), .wqe_rd_last(rdc_last[2]), .wqe_rd_err(rdc_err[2]),
    .post_valid(rq_post_valid), .post_ready(rq_post_ready), .post_conn(rq_post[CONN_W+161 -: CONN_W]),
    .post_qn(rq_post[161:160]), .post_addr(rq_post[159:96]), .post_len(rq_post[95:64]), .post_id(rq_post[63:0]),
    .rcpl_valid(cpl_valid && cpl_send), .rcpl_ready(rcpl_ready), .rcpl_conn(cpl_conn), .rcpl_opcode(cpl_opcode),
    .rcpl_msn(cpl_msn), .rcpl_len(cpl_len), .rcpl_id(cpl_id), .rcpl_inv_stag(cpl_inv_stag),
    .inv_valid(rq_inv_valid), .inv_index(rq_inv_index),
    .fail_valid(rq_fail_valid), .fail_ready(rq_fail_ready), .fail_qpn(rq_fail_qpn), .fail_local(rq_fail_local),
    .fail_layer_etype(rq_fail_le), .fail_code(rq_fail_code),
    // The QP entered the error state (rnic_sq): every posted receive
    // completes FLUSHED.
    .qerr_valid(qerr_valid), .qerr_qpn(qerr_qpn), .qerr_status(qerr_status), .qerr_layer_etype(qerr_le),
    .qerr_code(qerr_code),
    .cq_valid(rq_cq_valid), .cq_ready(rq_cq_ready), .cq_cqn(rq_cq_cqn), .cq_entry(rq_cq_entry),
    .ev_valid(rq_ev_valid), .ev_ready(rq_ev_ready), .ev_entry(rq_ev_entry),
    .ci_rd_qpn(drain_qpn), .ci_rd_value(drain_rq_ci), .rx_hold(rq_rx_hold)
);

// The Read responder: the device's own Read Request and Terminate buffers
// (posted at QP_RTS, at device addresses rnic_axisink absorbs), each
// inbound Read Request's source checked and read, the Read Response into
// rnic_tx (through rnic_txarb).
rnic_rresp #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2), .POST_DEPTH_LOG2(POST_LOG2)
) rresp (
    .clk(clk), .rst(rst),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_state_wr_pd(qp_state_wr_pd),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .mr_rd_req(rs_mr_rd_req), .mr_rd_gnt(mrarb_gnt[2]), .mr_rd_index(rs_mr_rd_index), .mr_rd_valid(mr_rd_valid),
    .mr_rd_entry(mr_rd_entry),
    .rreq_valid(cpl_valid && cpl_rreq), .rreq_ready(rreq_ready), .rreq_conn(cpl_conn), .rreq_rr(cpl_rr), .rreq_msn(cpl_msn),
    .post_valid(rs_post_valid), .post_ready(rs_post_ready), .post_conn(rs_post[CONN_W+161 -: CONN_W]),
    .post_qn(rs_post[161:160]), .post_addr(rs_post[159:96]), .post_len(rs_post[95:64]), .post_id(rs_post[63:0]),
    .pay_rd_req_valid(rdc_req_valid[3]), .pay_rd_req_ready(rdc_req_ready[3]), .pay_rd_req_addr(rdc_req_addr[255:192]),
    .pay_rd_req_len(rdc_req_len[127:96]), .pay_rd_req_what(rdc_req_what[11:9]),
    .pay_rd_valid(rdc_valid[3]), .pay_rd_ready(rdc_ready[3]), .pay_rd_data(rdc_data[4*DATA_W-1:3*DATA_W]),
    .pay_rd_keep(rdc_keep[4*DATA_W/8-1:3*DATA_W/8]), .pay_rd_last(rdc_last[3]), .pay_rd_err(rdc_err[3]),
    .tx_desc_valid(txs_desc_valid[1]), .tx_desc_ready(txs_desc_ready[1]), .tx_desc_opcode(rs_desc_opcode),
    .tx_desc_stag(rs_desc_stag), .tx_desc_to(rs_desc_to), .tx_desc_msn(rs_desc_msn), .tx_desc_inv_stag(rs_desc_inv),
    .tx_desc_len(rs_desc_len), .tx_desc_rr_sink_stag(rs_desc_rr_sink_stag), .tx_desc_rr_sink_to(rs_desc_rr_sink_to),
    .tx_desc_rr_size(rs_desc_rr_size), .tx_desc_rr_src_stag(rs_desc_rr_src_stag),
    .tx_desc_rr_src_to(rs_desc_rr_src_to), .tx_desc_mulpdu(rs_desc_mulpdu), .tx_desc_conn(rs_desc_conn),
    .tx_axis_tdata(txs_data[2*DATA_W-1:DATA_W]), .tx_axis_tkeep(txs_keep[2*DATA_W/8-1:DATA_W/8]),
    .tx_axis_tvalid(txs_valid[1]), .tx_axis_tready(txs_ready[1]), .tx_axis_tlast(txs_last[1]),
    .fail_valid(rs_fail_valid), .fail_ready(rs_fail_ready), .fail_qpn(rs_fail_qpn), .fail_local(rs_fail_local),
    .fail_layer_etype(rs_fail_le), .fail_code(rs_fail_code), .fail_hdrct(rs_fail_hdrct),
    .fail_seglen(rs_fail_seglen), .fail_ddp_hdr(rs_fail_ddp_hdr), .fail_rdma_hdr(rs_fail_rdma_hdr),
    .rx_hold(rs_rx_hold)
);

// ddp_rx's receive buffers: the RQ engine's and the Read responder's.
wire                         post_valid, post_ready;
wire [CONN_W+2+64+32+64-1:0] post;
rnic_recmux #(.N(2), .W(CONN_W + 2 + 64 + 32 + 64)) postmux (
    .clk(clk), .rst(rst), .s_valid({rs_post_valid, rq_post_valid}), .s_ready({rs_post_ready, rq_post_ready}),
    .s_data({rs_post, rq_post}), .m_valid(post_valid), .m_ready(post_ready), .m_data(post)
);

// The network input waits for the receives posted before it: a segment
// whose QP has an RQ doorbell in or an entry fetched and not yet posted
// (rnic_rq's rx_hold), or Read Request or Terminate buffers still to post
// (rnic_rresp's: QP_RTS's, a served request's repost), is held at its
// first beat until ddp_rx has them, so a Send never finds "no buffer" for
// a receive the driver posted before the segment reached the device (the
// model posts at the doorbell), nor a Read Request for a buffer its
// QP_RTS or the previous Read Response's end gave. A frame once offered to rnic_rx, or begun, is not held
// (AXI4-Stream: an offer stays until taken); a doorbell after it is the
// later event.
wire               net_hold_q;
reg                net_offer_reg, net_mid_reg;
wire               net_tready;
rnic_pick #(.AW(CONN_W)) net_hold_pick (.v(rq_rx_hold | rs_rx_hold), .a(s_net_tuser[48 +: CONN_W]), .y(net_hold_q));
wire               net_hold = net_hold_q && !net_mid_reg && !net_offer_reg;
wire               net_tvalid = s_net_tvalid && !net_hold;
assign s_net_tready = net_tready && !net_hold;
always @(posedge clk) begin
    net_offer_reg <= net_tvalid && !net_tready;
    if (net_tvalid && net_tready) net_mid_reg <= !s_net_tlast;
    if (rst) begin
        net_offer_reg <= 1'b0;
        net_mid_reg <= 1'b0;
    end
end

rnic_rx #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(POST_LOG2), .ADDR_W(64), .ID_W(64)
) rx (
    .clk(clk), .rst(rst),
    .cfg_valid(rcfg_valid), .cfg_ready(rcfg_ready), .cfg_conn(rcfg_head[CFGR_W-1 -: CONN_W]),
    .cfg_en(rcfg_head[50]), .cfg_mrk_en(rcfg_head[49]), .cfg_crc_en(rcfg_head[48]), .cfg_base(rcfg_head[47:16]),
    // Every connection in MPA mode: the device's QP setup (QP_RTS) does not
    // carry the TUF mode or the peer's key yet, so tuf_rx stays unused.
    .cfg_tuf(1'b0), .cfg_key(48'd0),
    .fail_valid(rcfg_fail), .fail_ready(rfail_ready), .fail_conn(rcfg_head[CFGR_W-1 -: CONN_W]),
    .s_axis_tdata(s_net_tdata), .s_axis_tkeep(s_net_tkeep), .s_axis_tvalid(net_tvalid), .s_axis_tready(net_tready),
    .s_axis_tlast(s_net_tlast), .s_axis_tuser({s_net_tuser[48 +: CONN_W], s_net_tuser[47:0]}),
    .m_exc_tdata(exc_tdata), .m_exc_tkeep(exc_tkeep), .m_exc_tvalid(exc_tvalid), .m_exc_tready(exc_tready),
    .m_exc_tlast(exc_tlast), .m_exc_tuser(exc_tuser),
    .m_skip_valid(), .m_skip_conn(), .m_skip_seq(), .m_skip_reason(), .m_early_valid(), .m_early_conn(),
    .ooo_busy(),
    .s_conn_valid(ccfg_valid), .s_conn_ready(ccfg_ready), .s_conn_conn(ccfg_head[CFGR_W-1 -: CONN_W]),
    .s_conn_enable(ccfg_head[50]), .s_conn_pd({16'd0, ccfg_head[15:0]}),
    .s_stag_valid(stg_valid), .s_stag_ready(stg_ready), .s_stag_index(stg_head[STGR_W-1 -: STAG_AW]),
    .s_stag_entry_valid(stg_head[STGR_W-STAG_AW-1]), .s_stag_key(stg_head[STGR_W-STAG_AW-2 -: 8]),
    .s_stag_pd({16'd0, stg_head[STGR_W-STAG_AW-10 -: 16]}), .s_stag_bound(stg_head[STGR_W-STAG_AW-26]),
    .s_stag_conn(stg_head[STGR_W-STAG_AW-27 -: CONN_W]), .s_stag_access(stg_head[161:160]),
    .s_stag_base(stg_head[159:96]), .s_stag_len(stg_head[95:64]), .s_stag_addr(stg_head[63:0]),
    .s_post_valid(post_valid), .s_post_ready(post_ready), .s_post_conn(post[CONN_W+161 -: CONN_W]),
    .s_post_qn(post[161:160]), .s_post_addr(post[159:96]), .s_post_len(post[95:64]), .s_post_id(post[63:0]),
    .m_axi_awid(pl_awid), .m_axi_awaddr(pl_awaddr), .m_axi_awlen(pl_awlen), .m_axi_awsize(pl_awsize),
    .m_axi_awburst(pl_awburst), .m_axi_awcache(pl_awcache), .m_axi_awprot(pl_awprot), .m_axi_awvalid(pl_awvalid),
    .m_axi_awready(pl_awready), .m_axi_wdata(pl_wdata), .m_axi_wstrb(pl_wstrb), .m_axi_wlast(pl_wlast),
    .m_axi_wvalid(pl_wvalid), .m_axi_wready(pl_wready), .m_axi_bid(pl_bid), .m_axi_bresp(pl_bresp),
    .m_axi_bvalid(pl_bvalid), .m_axi_bready(pl_bready),
    .m_wr_addr(), .m_wr_data(), .m_wr_strb(), .m_wr_last(), .m_wr_valid(), .m_wr_ready(1'b0),
    .m_cpl_valid(cpl_valid), .m_cpl_ready(cpl_ready), .m_cpl_conn(cpl_conn), .m_cpl_opcode(cpl_opcode),
    .m_cpl_tagged(cpl_tagged), .m_cpl_qn(cpl_qn), .m_cpl_msn(cpl_msn), .m_cpl_len(cpl_len), .m_cpl_id(cpl_id),
    .m_cpl_stag(), .m_cpl_inv_stag(cpl_inv_stag), .m_cpl_rr(cpl_rr),
    .m_err_valid(rx_err_valid), .m_err_ready(rxe_ready), .m_err_conn(rx_err_conn), .m_err_layer(rx_err_layer),
    .m_err_etype(rx_err_etype), .m_err_code(rx_err_code), .m_err_hdrct(rx_err_hdrct),
    .m_err_seglen(rx_err_seglen), .m_err_hdr(rx_err_hdr),
    .m_drop_valid(), .m_drop_conn(), .m_drop_reason(), .m_drop_first(), .m_drop_count(),
    .m_post_err_valid(), .m_post_err_conn(), .m_post_err_qn(), .m_post_err_id(), .m_post_err_reason(),
    .m_berr_valid(), .m_berr_conn(), .m_berr_resp(), .m_done_valid(), .m_done_conn(),
    .m_stat_verdict_valid(st_vd_valid), .m_stat_verdict_code(st_vd_code), .m_stat_verdict_conn(st_vd_conn),
    .m_stat_place(st_place)
);
wire              st_vd_valid, st_place;
wire [2:0]        st_vd_code;
wire [CONN_W-1:0] st_vd_conn;

// The exception ring writer: the segments rnic_rx does not take in order
// (a QP not enabled or in error, out of order, duplicate, empty) go to the
// host's exception ring, an EXCEPTION event each buffer.
wire [DATA_W-1:0]   exc_tdata;
wire [DATA_W/8-1:0] exc_tkeep;
wire                exc_tvalid, exc_tready, exc_tlast;
wire [CONN_W+50:0]  exc_tuser;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]         exc_lost;
/* verilator lint_on UNUSEDSIGNAL */
rnic_exc #(.DATA_W(DATA_W), .CONN_W(CONN_W)) exc (
    .clk(clk), .rst(rst),
    .s_exc_tdata(exc_tdata), .s_exc_tkeep(exc_tkeep), .s_exc_tvalid(exc_tvalid), .s_exc_tready(exc_tready),
    .s_exc_tlast(exc_tlast), .s_exc_tuser(exc_tuser),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_exc_ring(evr_exc_ring), .evr_exc_log2(evr_exc_log2),
    .evr_exc_buf_log2(evr_exc_buf_log2),
    .wr_req_valid(wrc_req_valid[2]), .wr_req_ready(wrc_req_ready[2]), .wr_req_addr(wrc_req_addr[191:128]),
    .wr_req_len(wrc_req_len[95:64]), .wr_req_what(wrc_req_what[8:6]),
    .wr_valid(wrc_valid[2]), .wr_ready(wrc_ready[2]), .wr_data(wrc_data[3*DATA_W-1:2*DATA_W]),
    .wr_keep(wrc_keep[3*DATA_W/8-1:DATA_W/4]), .wr_last(wrc_last[2]),
    .wr_done_valid(wrc_done_valid[2]), .wr_done_ready(wrc_done_ready[2]), .wr_done_err(wrc_done_err[2]),
    .ev_valid(exc_ev_valid), .ev_ready(exc_ev_ready), .ev_entry(exc_ev_entry), .lost_count(exc_lost)
);
/* verilator lint_on PINCONNECTEMPTY */

// idle: nothing moved on any port or between the engines for IDLE_CLOCKS
// clocks and no admin command running. The engines have no busy outputs
// of their own yet, so quiet stands for idle; a vector's MOD_TIME longer
// than that, with nothing else moving, fires at the driver's next access.
localparam IDLE_CLOCKS = 4096;
wire moving = adm_busy || sqdb_valid || cqdb_valid || qp_rts_valid || qp_state_wr_valid || win_wr_valid ||
              cq_cfg_valid || evr_valid || (|rdc_req_valid) || (|rdc_valid) || (|wrc_req_valid) || (|wrc_valid) ||
              (|wrc_done_valid) || desc_valid || txp_valid || fp_valid || sq_cq_valid || sq_ev_valid ||
              cq_ev_valid || rrd_valid || irq_valid || m_axi_arvalid || m_axi_rvalid ||
              m_axi_awvalid || m_axi_wvalid || m_axi_bvalid || tcfg_valid_reg || cq_int_valid || evq_int_valid ||
              s_net_tvalid || rcfg_valid || ccfg_valid || stg_valid || cpl_valid || rx_err_valid || pl_awvalid ||
              pl_wvalid || pl_bvalid || rqdb_valid || rq_qp_rd_req || rq_mr_rd_req || rs_mr_rd_req || rq_cq_valid ||
              rq_ev_valid || rq_post_valid || rs_post_valid || rq_fail_valid || rs_fail_valid || qerr_valid ||
              (|txs_desc_valid) || (|txs_valid) || exc_tvalid || exc_ev_valid || qfd_v ||
              ow_st_reg != OW_IDLE || cq_ovf_valid || pref_valid || fl_busy;
reg [12:0] quiet_reg;
always @(posedge clk) begin
    if (moving) quiet_reg <= 13'd0;
    else if (quiet_reg != IDLE_CLOCKS[12:0]) quiet_reg <= quiet_reg + 13'd1;
    if (rst) quiet_reg <= 13'd0;
end
assign idle = quiet_reg == IDLE_CLOCKS[12:0];
/* verilator lint_off UNUSEDSIGNAL */
wire unused_ports = &{1'b0, s_net_tuser[63:48+CONN_W], evq_lost, mr_wr_access[1:0], rwr_valid, rwr_what, rwr_addr,
                      rwr_len,
                      qpdb_wr_biten, cqdb_wr_biten, qpdb_addr[1:0], cqdb_addr[1:0]};
/* verilator lint_on UNUSEDSIGNAL */
// --- the counters block (hw/regs/rnic.rdl; the Go model's d.cnt.add) ---------------
//
// Each counter counts what driver/model counts, at the point where the
// device does the same thing:
//   tx_fpdus, tx_octets   FPDUs onto the seam (m_net), and their octets
//                         (MPA header, markers, pad and CRC included);
//   tx_terminates         Terminate descriptors (opcode 7) rnic_tx takes;
//   rx_fpdus, rx_crc_errors, rx_marker_errors   mpa_rx's verdicts as ddp_rx
//                         takes them (0 good, 2 CRC, 3 marker or length),
//                         each connection's first bad one only: after it
//                         the connection's later verdicts (FPDUs already
//                         inside) are discarded, as the model stops the
//                         stream at the error; QP_RTS starts it again;
//   rx_octets             the new in-order octets of each segment
//                         mpa_rx_align accepts (its classification,
//                         mirrored here from s_net's tuser: enabled, not
//                         in error, not empty, seq <= rcv_nxt < seq + len;
//                         the octets from rcv_nxt to seq + len);
//   rx_rdmap_*, rx_ddp_*  ddp_rx's m_err (the peer's stream errors) by
//                         layer and type; an LLP error (a bad verdict) is
//                         counted above only;
//   rx_terminates         ddp_rx's Terminate completions (QN 2);
//   rx_exc_*              the EXCEPTION events of rnic_exc (one a buffer
//                         written), by reason;
//   dma_reads             the read clients' requests answered without an
//                         error (a frame's last beat, err low);
//   dma_writes            the write clients' requests done without an
//                         error, and each in-order ULPDU with a payload
//                         entering ddp_rx (the model's placement write,
//                         one a DDP segment, however many bursts).
// Several of the DMA events can fall in one clock: they go through a
// small pending count, one increment a clock.
localparam [3:0] OP_TERMINATE = 4'h7;   // RFC 5040 4.2
wire cnt_tx_fpdu = fp_valid && fp_ready && fp_last;
wire cnt_tx_term = desc_valid && desc_ready && desc[DESC_W-1 -: 4] == OP_TERMINATE;
// A connection's verdicts after its first bad one do not count.
reg  [(1<<CONN_W)-1:0] vd_bad_reg;
wire vd_take = st_vd_valid && !vd_bad_reg[st_vd_conn];
always @(posedge clk) begin
    if (vd_take && st_vd_code != 3'd0) vd_bad_reg[st_vd_conn] <= 1'b1;
    if (rcfg_valid && rcfg_ready) vd_bad_reg[rcfg_head[CFGR_W-1 -: CONN_W]] <= 1'b0;
    if (rst) vd_bad_reg <= 0;
end
wire cnt_rx_fpdu = vd_take && st_vd_code == 3'd0;
wire cnt_rx_crc = vd_take && st_vd_code == 3'd2;
wire cnt_rx_mrk = vd_take && st_vd_code == 3'd3;
// rx_octets: mpa_rx_align's classification of each segment, from its
// first beat on s_net, against a copy of each connection's state (rnic_rx's
// cfg: enable and base; its verdicts and fail_*: error; rcv_nxt advanced here).
reg  [(1<<CONN_W)-1:0] ro_en_reg, ro_err_reg;
reg  [31:0]            ro_nxt_mem [0:(1<<CONN_W)-1];
reg                    ro_mid_reg;    // inside a segment on s_net
reg                    ro_hit_reg;
reg  [31:0]            ro_add_reg;
wire [CONN_W-1:0]      ro_conn = s_net_tuser[48 +: CONN_W];
wire [31:0]            ro_seq = s_net_tuser[47:16];
wire [31:0]            ro_end = s_net_tuser[47:16] + {16'd0, s_net_tuser[15:0]};
wire [31:0]            ro_nxt = ro_nxt_mem[ro_conn];
wire [31:0]            ro_ahead = ro_seq - ro_nxt;   // > 0 (signed): out of order
wire [31:0]            ro_new = ro_end - ro_nxt;     // > 0 (signed): new octets
wire                   ro_first = s_net_tvalid && s_net_tready && !ro_mid_reg;
wire                   ro_take = ro_first && ro_en_reg[ro_conn] && !ro_err_reg[ro_conn] &&
                                 s_net_tuser[15:0] != 16'd0 && (ro_ahead[31] || ro_ahead == 32'd0) &&
                                 !ro_new[31] && ro_new != 32'd0;
always @(posedge clk) begin
    if (s_net_tvalid && s_net_tready) ro_mid_reg <= !s_net_tlast;
    ro_hit_reg <= ro_take;
    ro_add_reg <= ro_new;
    if (ro_take) ro_nxt_mem[ro_conn] <= ro_end;
    if (st_vd_valid && st_vd_code != 3'd0) ro_err_reg[st_vd_conn] <= 1'b1;
    if (rcfg_fail && rfail_ready) ro_err_reg[rcfg_head[CFGR_W-1 -: CONN_W]] <= 1'b1;   // the QP failed
    if (rcfg_valid && rcfg_ready) begin
        ro_en_reg[rcfg_head[CFGR_W-1 -: CONN_W]] <= rcfg_head[50];
        ro_err_reg[rcfg_head[CFGR_W-1 -: CONN_W]] <= 1'b0;
        ro_nxt_mem[rcfg_head[CFGR_W-1 -: CONN_W]] <= rcfg_head[47:16];
    end
    if (rst) begin
        ro_mid_reg <= 1'b0;
        ro_hit_reg <= 1'b0;
        ro_en_reg <= 0;
        ro_err_reg <= 0;
    end
end
// ddp_rx's errors by RFC 5040 4.8 layer (0 RDMAP, 1 DDP) and type.
wire err_go = rx_err_valid && rxe_ready;   // m_err taken (by the QP failure merge, xfmux)
wire cnt_rdmap_cat = err_go && rx_err_layer == 4'd0 && rx_err_etype == 4'd0;
wire cnt_rdmap_prot = err_go && rx_err_layer == 4'd0 && rx_err_etype == 4'd1;
wire cnt_rdmap_op = err_go && rx_err_layer == 4'd0 && rx_err_etype == 4'd2;
wire cnt_ddp_tag = err_go && rx_err_layer == 4'd1 && rx_err_etype == 4'd1;
wire cnt_ddp_untag = err_go && rx_err_layer == 4'd1 && rx_err_etype == 4'd2;
wire cnt_rx_term = cpl_valid && cpl_ready && !cpl_tagged && cpl_qn == 2'd2;
// rnic_exc's EXCEPTION events (type 3, detail = reason).
wire exc_ev_go = exc_ev_valid && exc_ev_ready && exc_ev_entry[7:0] == 8'd3;
wire [7:0] exc_why = exc_ev_entry[15:8];
// DMA: requests done without an error.
function automatic [2:0] ones4(input [3:0] v);
    ones4 = {2'd0, v[0]} + {2'd0, v[1]} + {2'd0, v[2]} + {2'd0, v[3]};
endfunction
wire [3:0] dr_done = rdc_valid & rdc_ready & rdc_last & ~rdc_err;
wire [3:0] dw_done = {st_place, wrc_done_valid & wrc_done_ready & ~wrc_done_err};
reg  [7:0] dr_pend_reg, dw_pend_reg;
wire [7:0] dr_sum = dr_pend_reg + {5'd0, ones4(dr_done)};
wire [7:0] dw_sum = dw_pend_reg + {5'd0, ones4(dw_done)};
always @(posedge clk) begin
    dr_pend_reg <= dr_sum - {7'd0, dr_sum != 8'd0};
    dw_pend_reg <= dw_sum - {7'd0, dw_sum != 8'd0};
    if (rst) begin
        dr_pend_reg <= 8'd0;
        dw_pend_reg <= 8'd0;
    end
end

// --- the configuration flash (rnic_flash) ----------------------------------------

wire        fl_cmd_req, fl_cmd_is_wr, fl_cmd_rd_ack, fl_cmd_wr_ack;
wire [31:0] fl_cmd_wr_data, fl_cmd_rd_data;
wire [23:0] fl_addr;
wire [8:0]  fl_len;
wire        fl_busy, fl_boot;
wire [7:0]  fl_code;
wire        fl_data_req, fl_data_is_wr, fl_data_rd_ack, fl_data_wr_ack;
wire [7:0]  fl_data_addr;
wire [31:0] fl_data_wr_data, fl_data_wr_biten, fl_data_rd_data;
wire        fl_bctl_req, fl_bctl_is_wr, fl_bctl_rd_ack, fl_bctl_wr_ack;
wire [31:0] fl_bctl_wr_data;
wire        fl_b_done;
wire [1:0]  fl_b_slot;
wire [3:0]  fl_b_reason;
wire [2:0]  fl_b_valid, fl_b_present, fl_b_confirmed, fl_b_tried;
wire [31:0] fl_b_version, fl_b_security, fl_b_build, fl_b_seq, fl_b_addr, fl_protect;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] fl_cmd_wr_biten, fl_bctl_wr_biten;   // whole-word writes
/* verilator lint_on UNUSEDSIGNAL */
localparam FLASH_SIZE_LOG2 = 24;
localparam FLASH_QUAD = 1;

rnic_flash #(.SIZE_LOG2(FLASH_SIZE_LOG2), .QUAD(FLASH_QUAD)) flash (
    .clk(clk), .rst(rst),
    .cmd_req(fl_cmd_req), .cmd_is_wr(fl_cmd_is_wr), .cmd_wr_data(fl_cmd_wr_data), .cmd_rd_ack(fl_cmd_rd_ack),
    .cmd_wr_ack(fl_cmd_wr_ack), .cmd_rd_data(fl_cmd_rd_data), .addr(fl_addr), .len(fl_len),
    .st_busy(fl_busy), .st_boot(fl_boot), .st_code(fl_code),
    .data_req(fl_data_req), .data_addr(fl_data_addr), .data_is_wr(fl_data_is_wr), .data_wr_data(fl_data_wr_data),
    .data_wr_biten(fl_data_wr_biten), .data_rd_ack(fl_data_rd_ack), .data_rd_data(fl_data_rd_data),
    .data_wr_ack(fl_data_wr_ack),
    .bctl_req(fl_bctl_req), .bctl_is_wr(fl_bctl_is_wr), .bctl_wr_data(fl_bctl_wr_data), .bctl_rd_ack(fl_bctl_rd_ack),
    .bctl_wr_ack(fl_bctl_wr_ack),
    .boot_done(fl_b_done), .boot_slot(fl_b_slot), .boot_reason(fl_b_reason), .boot_valid(fl_b_valid),
    .boot_present(fl_b_present), .boot_confirmed(fl_b_confirmed), .boot_tried(fl_b_tried),
    .boot_version(fl_b_version), .boot_security(fl_b_security), .boot_build(fl_b_build), .boot_seq(fl_b_seq),
    .boot_addr(fl_b_addr), .protect(fl_protect),
    .spi_sck(spi_sck), .spi_cs_n(spi_cs_n), .spi_io_o(spi_io_o), .spi_io_oe(spi_io_oe), .spi_io_i(spi_io_i)
);

// --- the BAR ---------------------------------------------------------------------

rnic_regs regs (
    .clk(clk),
    .rst(rst),
    .s_axil_awready(s_axil_awready),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_wready(s_axil_wready),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_bready(s_axil_bready),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_arready(s_axil_arready),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_rready(s_axil_rready),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .hwif_in_id_build_hash_value(BUILD_HASH),
    .hwif_in_id_data_width_value(DATA_W[31:0]),
    .hwif_in_id_cap_conns_value(CONNS),
    .hwif_in_id_cap_stags_value(STAGS),
    .hwif_in_id_cap_queues_sq_log2(SQ_LOG2[7:0]),
    .hwif_in_id_cap_queues_rq_log2(RQ_LOG2[7:0]),
    .hwif_in_id_cap_queues_cq_log2(CQ_LOG2[7:0]),
    .hwif_in_id_cap_cqs_value(CQS),
    .hwif_in_id_cap_vectors_value(VECTORS),
    .hwif_in_id_cap_windows_value(WINDOWS),
    .hwif_in_counters_tx_fpdus_count_incr(cnt_tx_fpdu),
    .hwif_in_counters_tx_octets_count_incr(fp_valid && fp_ready),
    .hwif_in_counters_tx_octets_count_incrvalue({32'd0, fp_octets}),
    .hwif_in_counters_rx_fpdus_count_incr(cnt_rx_fpdu),
    .hwif_in_counters_rx_octets_count_incr(ro_hit_reg),
    .hwif_in_counters_rx_octets_count_incrvalue({32'd0, ro_add_reg}),
    .hwif_in_counters_rx_crc_errors_count_incr(cnt_rx_crc),
    .hwif_in_counters_rx_marker_errors_count_incr(cnt_rx_mrk),
    .hwif_in_counters_rx_rdmap_catastrophic_count_incr(cnt_rdmap_cat),
    .hwif_in_counters_rx_rdmap_protection_count_incr(cnt_rdmap_prot),
    .hwif_in_counters_rx_rdmap_operation_count_incr(cnt_rdmap_op),
    .hwif_in_counters_rx_ddp_tagged_count_incr(cnt_ddp_tag),
    .hwif_in_counters_rx_ddp_untagged_count_incr(cnt_ddp_untag),
    .hwif_in_counters_tx_terminates_count_incr(cnt_tx_term),
    .hwif_in_counters_rx_terminates_count_incr(cnt_rx_term),
    .hwif_in_counters_rx_exc_not_enabled_count_incr(exc_ev_go && exc_why == 8'd1),
    .hwif_in_counters_rx_exc_in_error_count_incr(exc_ev_go && exc_why == 8'd2),
    .hwif_in_counters_rx_exc_out_of_order_count_incr(exc_ev_go && exc_why == 8'd3),
    .hwif_in_counters_rx_exc_duplicate_count_incr(exc_ev_go && exc_why == 8'd4),
    .hwif_in_counters_rx_exc_empty_count_incr(exc_ev_go && exc_why == 8'd5),
    .hwif_in_counters_dma_reads_count_incr(dr_sum != 8'd0),
    .hwif_in_counters_dma_writes_count_incr(dw_sum != 8'd0),
    .hwif_in_counters_admin_overrun_count_incr(adm_overrun || (cmd_req && cmd_is_wr && dp_busy)),
    .hwif_out_admin_cmd_req(cmd_req),
    .hwif_out_admin_cmd_req_is_wr(cmd_is_wr),
    .hwif_in_admin_cmd_rd_ack(cmd_req && !cmd_is_wr),
    .hwif_in_admin_cmd_wr_ack(cmd_req && cmd_is_wr),
    .hwif_in_admin_cmd_rd_data({24'd0, adm_last_op}),
    .hwif_out_admin_cmd_wr_data(cmd_wr_data),
    .hwif_out_admin_cmd_wr_biten(cmd_wr_biten),
    .hwif_in_admin_status_busy(adm_busy || dp_busy),
    .hwif_in_admin_status_code(adm_code),
    .hwif_in_admin_arg0_value(adm_out[31:0]), .hwif_out_admin_arg0_value(args_wr[31:0]), .hwif_in_admin_arg0_value_we(adm_out_we),
    .hwif_in_admin_arg1_value(adm_out[63:32]), .hwif_out_admin_arg1_value(args_wr[63:32]), .hwif_in_admin_arg1_value_we(adm_out_we),
    .hwif_in_admin_arg2_value(adm_out[95:64]), .hwif_out_admin_arg2_value(args_wr[95:64]), .hwif_in_admin_arg2_value_we(adm_out_we),
    .hwif_in_admin_arg3_value(adm_out[127:96]), .hwif_out_admin_arg3_value(args_wr[127:96]), .hwif_in_admin_arg3_value_we(adm_out_we),
    .hwif_in_admin_arg4_value(adm_out[159:128]), .hwif_out_admin_arg4_value(args_wr[159:128]), .hwif_in_admin_arg4_value_we(adm_out_we),
    .hwif_in_admin_arg5_value(adm_out[191:160]), .hwif_out_admin_arg5_value(args_wr[191:160]), .hwif_in_admin_arg5_value_we(adm_out_we),
    .hwif_in_admin_arg6_value(adm_out[223:192]), .hwif_out_admin_arg6_value(args_wr[223:192]), .hwif_in_admin_arg6_value_we(adm_out_we),
    .hwif_in_admin_arg7_value(adm_out[255:224]), .hwif_out_admin_arg7_value(args_wr[255:224]), .hwif_in_admin_arg7_value_we(adm_out_we),
    .hwif_out_vectors_vec_req(vec_req),
    .hwif_out_vectors_vec_addr(vec_addr),
    .hwif_out_vectors_vec_req_is_wr(vec_is_wr),
    .hwif_out_vectors_vec_wr_data(vec_wr_data),
    .hwif_out_vectors_vec_wr_biten(vec_wr_biten),
    .hwif_in_vectors_vec_wr_ack(vec_wr_ack),
    .hwif_in_vectors_vec_rd_data(vec_rd_data),
    .hwif_in_vectors_vec_rd_ack(vec_rd_ack),
    .hwif_out_doorbells_cq_db_req(cqdb_req),
    .hwif_out_doorbells_cq_db_addr(cqdb_addr),
    .hwif_out_doorbells_cq_db_req_is_wr(cqdb_is_wr),
    .hwif_out_doorbells_cq_db_wr_data(cqdb_wr_data),
    .hwif_out_doorbells_cq_db_wr_biten(cqdb_wr_biten),
    .hwif_in_doorbells_cq_db_wr_ack(cqdb_req && cqdb_is_wr),
    .hwif_in_doorbells_cq_db_rd_data(32'd0),
    .hwif_in_doorbells_cq_db_rd_ack(cqdb_req && !cqdb_is_wr),
    .hwif_out_doorbells_qp_db_req(qpdb_req),
    .hwif_out_doorbells_qp_db_addr(qpdb_addr),
    .hwif_out_doorbells_qp_db_req_is_wr(qpdb_is_wr),
    .hwif_out_doorbells_qp_db_wr_data(qpdb_wr_data),
    .hwif_out_doorbells_qp_db_wr_biten(qpdb_wr_biten),
    .hwif_in_doorbells_qp_db_wr_ack(qpdb_req && qpdb_is_wr),
    .hwif_in_doorbells_qp_db_rd_data(32'd0),
    .hwif_in_doorbells_qp_db_rd_ack(qpdb_req && !qpdb_is_wr),
    .hwif_in_flash_geometry_size_log2(FLASH_SIZE_LOG2[7:0]),
    .hwif_in_flash_geometry_sector_log2(8'd12),
    .hwif_in_flash_geometry_page_log2(8'd8),
    .hwif_in_flash_geometry_quad(FLASH_QUAD != 0),
    .hwif_out_flash_cmd_req(fl_cmd_req),
    .hwif_out_flash_cmd_req_is_wr(fl_cmd_is_wr),
    .hwif_in_flash_cmd_rd_ack(fl_cmd_rd_ack),
    .hwif_in_flash_cmd_wr_ack(fl_cmd_wr_ack),
    .hwif_in_flash_cmd_rd_data(fl_cmd_rd_data),
    .hwif_out_flash_cmd_wr_data(fl_cmd_wr_data),
    .hwif_out_flash_cmd_wr_biten(fl_cmd_wr_biten),
    .hwif_in_flash_status_busy(fl_busy),
    .hwif_in_flash_status_boot(fl_boot),
    .hwif_in_flash_status_code(fl_code),
    .hwif_out_flash_addr(fl_addr),
    .hwif_out_flash_len(fl_len),
    .hwif_in_flash_boot_status_slot(fl_b_slot),
    .hwif_in_flash_boot_status_done(fl_b_done),
    .hwif_in_flash_boot_status_reason(fl_b_reason),
    .hwif_in_flash_boot_status_valid(fl_b_valid),
    .hwif_in_flash_boot_status_present(fl_b_present),
    .hwif_in_flash_boot_status_confirmed(fl_b_confirmed),
    .hwif_in_flash_boot_status_tried(fl_b_tried),
    .hwif_in_flash_boot_version_value(fl_b_version),
    .hwif_in_flash_boot_security_value(fl_b_security),
    .hwif_in_flash_boot_build_value(fl_b_build),
    .hwif_in_flash_boot_seq_value(fl_b_seq),
    .hwif_in_flash_boot_addr_value(fl_b_addr),
    .hwif_out_flash_boot_ctrl_req(fl_bctl_req),
    .hwif_out_flash_boot_ctrl_req_is_wr(fl_bctl_is_wr),
    .hwif_in_flash_boot_ctrl_rd_ack(fl_bctl_rd_ack),
    .hwif_in_flash_boot_ctrl_wr_ack(fl_bctl_wr_ack),
    .hwif_in_flash_boot_ctrl_rd_data(32'd0),
    .hwif_out_flash_boot_ctrl_wr_data(fl_bctl_wr_data),
    .hwif_out_flash_boot_ctrl_wr_biten(fl_bctl_wr_biten),
    .hwif_in_flash_protect_value(fl_protect),
    .hwif_out_flash_data_req(fl_data_req),
    .hwif_out_flash_data_addr(fl_data_addr),
    .hwif_out_flash_data_req_is_wr(fl_data_is_wr),
    .hwif_out_flash_data_wr_data(fl_data_wr_data),
    .hwif_out_flash_data_wr_biten(fl_data_wr_biten),
    .hwif_in_flash_data_wr_ack(fl_data_wr_ack),
    .hwif_in_flash_data_rd_data(fl_data_rd_data),
    .hwif_in_flash_data_rd_ack(fl_data_rd_ack)
);

endmodule

`resetall
