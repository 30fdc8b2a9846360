// ddp_rx_wport: ddp_rx's output queues and host write port
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// Queues between placement and the host: aw_fifo (burst addresses and
// lengths), the W beat queue (w_in*/w2_in*, two beats a clock at twice the
// data width), rec_fifo (delivery records, RF in ddp_rx_defs.vh, for
// ddp_rx_deliver) and bq_fifo (the connection of each burst whose B
// response is outstanding). Drives one of three write ports from them
// (generate): the AXI4 write master at AXI_W = DATA_W (wport), at AXI_W =
// 2 DATA_W (wport2: two data beats a write beat), or the write-request
// stream m_wr_* (WR_REQ = 1, reqport: two lines a request; the AXI4 port's
// valids are then low).
//
// Cycle behaviour: a W beat goes once its burst's AW is valid (AXI4
// A3.3.1): the first W of a burst with its AW; one write beat (or request)
// a clock while the port is ready. b_cnt counts the bursts answered.
// wq_busy: a burst address or W beat still queued (the port has not taken
// every write placed so far), for the configuration fence (ddp_rx_tables).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_wport #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter REC_AW = 3,
    parameter BQ_AW = 4,
    parameter AXI_W = DATA_W,
    parameter WR_REQ = 0
) (
    clk,
    rst,
    m_axi_awready,
    m_axi_wready,
    m_axi_bresp,
    m_axi_bvalid,
    m_wr_ready,
    aw_in_valid,
    aw_in_data,
    w_in_valid,
    w_in_data,
    w2_in_valid,
    w2_in_data,
    w_in_half,
    w2_in_half,
    rf_in_valid,
    rf_in_data,
    rf_out_ready,
    b_go,
    d_conn_reg,
    m_axi_awid,
    m_axi_awaddr,
    m_axi_awlen,
    m_axi_awsize,
    m_axi_awburst,
    m_axi_awcache,
    m_axi_awprot,
    m_axi_awvalid,
    m_axi_wdata,
    m_axi_wstrb,
    m_axi_wlast,
    m_axi_wvalid,
    m_wr_addr,
    m_wr_data,
    m_wr_strb,
    m_wr_last,
    m_wr_valid,
    aw_in_ready,
    w_in_ready,
    w_in_ready2,
    b_valid,
    b_resp,
    rf_in_ready,
    rf_out_data,
    rf_out_valid,
    bq_in_ready,
    bq_out_data,
    bq_out_valid,
    aw_cnt_reg,
    b_cnt_reg,
    b_cnt1_reg,
    wq_busy
);
reg [MK_W-1:0] b_cnt1_next;
reg [MK_W-1:0] b_cnt_next;
reg [MK_W-1:0] aw_cnt_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire                        m_axi_awready;
input  wire                        m_axi_wready;
input  wire [1:0]                  m_axi_bresp;
input  wire                        m_axi_bvalid;
input  wire                        m_wr_ready;
input  wire                        aw_in_valid;
input  wire [ADDR_W+8-1:0]         aw_in_data;
input  wire                        w_in_valid;
input  wire [DATA_W+KEEP_W:0]      w_in_data;
input  wire                        w2_in_valid;
input  wire [DATA_W+KEEP_W:0]      w2_in_data;
input  wire                        w_in_half;
input  wire                        w2_in_half;
input  wire                        rf_in_valid;
input  wire [RF_W-1:0]             rf_in_data;
input  wire                        rf_out_ready;
input  wire                        b_go;
input  wire [CONN_W-1:0]           d_conn_reg;
output wire [0:0]                  m_axi_awid;
output wire [ADDR_W-1:0]           m_axi_awaddr;
output wire [7:0]                  m_axi_awlen;
output wire [2:0]                  m_axi_awsize;
output wire [1:0]                  m_axi_awburst;
output wire [3:0]                  m_axi_awcache;
output wire [2:0]                  m_axi_awprot;
output wire                        m_axi_awvalid;
output wire [AXI_W-1:0]            m_axi_wdata;
output wire [AXI_W/8-1:0]          m_axi_wstrb;
output wire                        m_axi_wlast;
output wire                        m_axi_wvalid;
output wire [ADDR_W-1:0]           m_wr_addr;
output wire [AXI_W-1:0]            m_wr_data;
output wire [AXI_W/8-1:0]          m_wr_strb;
output wire                        m_wr_last;
output wire                        m_wr_valid;
output wire                        aw_in_ready;
output wire                        w_in_ready;
output wire                        w_in_ready2;
output wire                        b_valid;
output wire [1:0]                  b_resp;
output wire                        rf_in_ready;
output wire [RF_W-1:0]             rf_out_data;
output wire                        rf_out_valid;
output wire                        bq_in_ready;
output wire [CONN_W-1:0]           bq_out_data;
output wire                        bq_out_valid;
output reg  [MK_W-1:0]             aw_cnt_reg = 0;
output reg  [MK_W-1:0]             b_cnt_reg = 0;
output reg  [MK_W-1:0]             b_cnt1_reg = 1;
output wire                        wq_busy;

wire [2:0]            fifo_ready2_unused;   // second push ports not used

// --- output queues ----------------------------------------------------------

wire                      aw_pop;           // the AW queue's head taken (AWREADY, or a burst's last request)
wire [ADDR_W+8-1:0]       aw_out_data;
wire                      aw_out_valid;

ddp_rx_fifo #(.WIDTH(ADDR_W + 8), .AW(2)) aw_fifo (
    .clk(clk), .rst(rst),
    .in_data(aw_in_data), .in_valid(aw_in_valid), .in_data2(aw_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[0]),
    .in_ready(aw_in_ready),
    .out_data(aw_out_data), .out_valid(aw_out_valid), .out_ready(aw_pop)
);

wire [DATA_W+KEEP_W:0]        w_out_data;
wire                          w_out_valid;
// W beats go once their burst's AW is valid, not only once it is taken
// (AXI4 A3.3.1: a master must not wait for AWREADY before asserting
// WVALID). w_credit counts the AWs taken less the bursts whose last W beat
// has gone, -1 (a burst's W beats all gone before its AW was taken) to
// 15: above 0, the W head is an AW's that was taken; at 0, it belongs to
// the AW at the head of its queue (AWs are queued with their burst's first
// W beat).
reg  [4:0]                    w_credit_reg = 5'd0, w_credit_next;
wire                          w_ok = (!w_credit_reg[4] && w_credit_reg != 5'd0)
                                     || (w_credit_reg == 5'd0 && aw_out_valid);

wire                          w_out_last;   // a bus beat with WLAST taken
// Bit LG of a queued W beat's address (the wide port's half for a burst's
// first beat): a flush beat alone or behind the last data beat is at the
// next output beat's address, every other at d_waddr_reg (pad beats, never
// first in a burst, need none).

assign m_axi_awid = 1'b0;
assign m_axi_awburst = 2'b01;                // INCR
assign m_axi_awcache = 4'b0011;
assign m_axi_awprot = 3'b010;
// The B responses the delivery waits for: the port's, or in the request
// stream's form (WR_REQ = 1) an OKAY for each burst once its last request
// has gone.

generate
if (WR_REQ == 0) begin : axiport
    assign m_axi_awvalid = aw_out_valid;
    assign aw_pop = m_axi_awready;
    assign b_valid = m_axi_bvalid;
    assign b_resp = m_axi_bresp;
    assign m_wr_addr = {ADDR_W{1'b0}};
    assign m_wr_data = {AXI_W{1'b0}};
    assign m_wr_strb = {(AXI_W/8){1'b0}};
    assign m_wr_last = 1'b0;
    assign m_wr_valid = 1'b0;
    wire unused_wr = &{1'b0, m_wr_ready};
end
if (WR_REQ == 0 && AXI_W == DATA_W) begin : wport
    // One queued W beat a bus beat.
    wire w_go = w_out_valid && w_ok;
    wire unused_half = &{1'b0, w_in_half, w2_in_half};
    ddp_rx_fifo #(.WIDTH(DATA_W + KEEP_W + 1), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data(w_in_data), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2(w2_in_data), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_out_data), .out_valid(w_out_valid), .out_ready(m_axi_wready && w_ok)
    );
    assign m_axi_awaddr = aw_out_data[ADDR_W+8-1:8];
    assign m_axi_awlen = aw_out_data[7:0];
    assign m_axi_awsize = LG[2:0];
    assign m_axi_wdata = w_out_data[DATA_W+KEEP_W:KEEP_W+1];
    assign m_axi_wstrb = w_out_data[KEEP_W:1];
    assign m_axi_wlast = w_out_data[0];
    assign m_axi_wvalid = w_go;
    assign w_out_last = w_go && m_axi_wready && m_axi_wlast;
end
if (WR_REQ == 0 && AXI_W != DATA_W) begin : wport2
    // A write port twice as wide: each bus beat carries two queued W beats
    // (an even one and the odd one after it, by address bit LG) or one, so
    // a payload that needs one W beat more than its ULPDU took in still
    // goes out at the input's rate. The W beats are queued as before, one
    // or two a clock, in ddp_rx_fifo2, whose two oldest are registers. A
    // burst of W beats at addr, len + 1 of them, is one of 2N-octet beats
    // at addr rounded down to 2N, ((addr / N) mod 2 + len) / 2 + 1 of them
    // (a BURST block of N-octet beats is half as many 2N-octet ones: the
    // bursts still never cross one, nor 4 KiB). Which half a burst's first
    // W beat takes is bit LG of its address, queued with it (w_in_half,
    // w2_in_half: bit LG of the beat's own address, which only a burst's
    // first beat needs); its later W beats start a bus beat at the even
    // half. The data and strobes are a pick between two registers.
    wire [DATA_W+KEEP_W+1:0]  w_h0x, w_h1;
    wire                      w_h1v;
    reg                       w_bfirst_reg = 1'b1, w_bfirst_next;   // the next W beat starts its burst
    wire                      w_odd = w_bfirst_reg && w_h0x[0];       // it goes in the odd half
    wire                      w_two = !w_odd && !w_out_data[0];      // the one behind it with it
    wire                      w2_go = w_out_valid && (w_odd || w_out_data[0] || w_h1v) && w_ok;
    wire                      w2_take = w2_go && m_axi_wready;
    wire [8:0]                aw_len2 = {8'd0, aw_out_data[8 + LG]} + {1'b0, aw_out_data[7:0]};
    wire                      unused_w2 = &{1'b0, w_h1[0], aw_len2[0]};
    assign w_out_data = w_h0x[DATA_W+KEEP_W+1:1];
    ddp_rx_fifo2 #(.WIDTH(DATA_W + KEEP_W + 2), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data({w_in_data, w_in_half}), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2({w2_in_data, w2_in_half}), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_h0x), .out_valid(w_out_valid), .out_ready(w2_take),
        .out_data2(w_h1), .out_valid2(w_h1v), .out_ready2(w_two)
    );
    always @* begin
        w_bfirst_next = w_bfirst_reg;
        if (w2_take) begin
            w_bfirst_next = m_axi_wlast;
        end
    end

    always @(posedge clk) begin
        w_bfirst_reg <= w_bfirst_next;
        if (rst) begin
            w_bfirst_reg <= 1'b1;
        end
    end
    assign m_axi_awaddr = {aw_out_data[ADDR_W+8-1:8+LG+1], {(LG+1){1'b0}}};
    assign m_axi_awlen = aw_len2[8:1];
    assign m_axi_awsize = LG[2:0] + 3'd1;
    assign m_axi_wdata = w_odd ? {w_out_data[DATA_W+KEEP_W:KEEP_W+1], {DATA_W{1'b0}}}
                               : {w_two ? w_h1[DATA_W+KEEP_W+1:KEEP_W+2] : {DATA_W{1'b0}},
                                  w_out_data[DATA_W+KEEP_W:KEEP_W+1]};
    assign m_axi_wstrb = w_odd ? {w_out_data[KEEP_W:1], {KEEP_W{1'b0}}}
                               : {w_two ? w_h1[KEEP_W+1:2] : {KEEP_W{1'b0}}, w_out_data[KEEP_W:1]};
    assign m_axi_wlast = w_two ? w_h1[1] : w_out_data[0];
    assign m_axi_wvalid = w2_go;
    assign w_out_last = w2_take && m_axi_wlast;
end
if (WR_REQ != 0) begin : reqport
    // The write-request stream (m_wr_*): each request writes two N-octet
    // lines from a line address, m_wr_addr (a multiple of N; low lane
    // first: octet j of m_wr_data goes to m_wr_addr + j where its strobe
    // is set), so a burst's W beats go out two a clock whatever their
    // address's alignment, and a payload that spills from one line into
    // the next (a short one at most two lines) is one request. The queued
    // W beats are taken as the wide AXI port takes them, from ddp_rx_fifo2
    // (its two oldest are registers): the oldest and, unless it ends its
    // burst, the one behind it, which a request waits for but at a burst's
    // first beat (so the first write goes with the first W beat, as on the
    // AXI4 ports, and a long payload goes two lines a request). The line of a
    // burst's k-th W beat is its AW's line + k (bursts never cross a
    // BURST block, so only the low BW bits add); the AW stays at its
    // queue's head until the burst's last request, m_wr_last, has gone.
    // Requests may carry no strobes at all (a burst's pad beats, where a
    // piece ended inside it). Writes are posted: the delivery waits for a
    // burst's last request to have gone, in place of its B response, and
    // the AXI4 port is idle (its valids low).
    // A ULPDU's flush beat that would be a burst of one at the next BURST
    // block (d_t_w2b) is queued in the same clock as the beat before it
    // (in_data2) and without an AW, as a continuation (its queue bit, in
    // place of the AXI port's half, is 1: a beat queued in in_data2 behind
    // a beat that ends its burst; d_t_w2's flush beat is in the burst of
    // the beat before it, which does not end there): when it is behind its burst's
    // last beat at the head, it goes in that beat's request, one line up
    // (so a short payload that crosses a block is one request too); when
    // that beat went as a request's second line, it goes alone at the
    // first line of the next block, r_nb_reg, kept from that request.
    wire [DATA_W+KEEP_W+1:0]  w_h0x, w_h1;
    wire                      w_h1v;
    localparam [BW:0]         K1 = 1, K2 = 2;
    localparam [BQ_AW+1:0]    B1 = 1, B0 = 0;
    reg  [BW-1:0]             r_k_reg = {BW{1'b0}}, r_k_next;    // W beats of the head burst gone
    reg  [BQ_AW+1:0]          r_b_reg = B0, r_b_next;            // bursts gone whose B is not yet taken
    reg  [ADDR_W-LG-BW-1:0]   r_nb_reg = {(ADDR_W-LG-BW){1'b0}}, r_nb_next;   // the block after the head AW's
    wire [ADDR_W-LG-BW-1:0]   r_nb;
    wire                      r_h0last = w_out_data[0];   // the oldest ends its burst
    wire                      r_h0cont = w_h0x[0];       // the oldest is a continuation, alone
    // A request offered as one line and not taken stays one line until it
    // is (r_one_reg): the beat behind it may arrive meanwhile, and a
    // valid/ready request's payload must not change while it waits.
    reg                       r_one_reg = 1'b0, r_one_next;
    wire                      r_two = w_h1v && !r_one_reg && (!r_h0last || w_h1[0]);   // the one behind it goes too
    wire                      r_go = w_out_valid && (aw_out_valid || r_h0cont)
                                     && (r_h0last || w_h1v || r_k_reg == {BW{1'b0}});
    wire                      r_take = r_go && m_wr_ready;
    wire                      r_last = r_two ? w_h1[1] : r_h0last;
    wire                      r_burst = r_take && r_last && !r_h0cont;   // a burst's last request
    wire [BW-1:0]             r_line = aw_out_data[8+LG +: BW] + r_k_reg;
    wire [BW:0]               r_k_sum = {1'b0, r_k_reg} + (r_two ? K2 : K1);
    rnic_incdec #(.W(ADDR_W-LG-BW), .DEC(0)) u_r_nb (.x(aw_out_data[ADDR_W+8-1:8+LG+BW]), .y(r_nb));
    wire                      unused_r = &{1'b0, aw_out_data[7:0], aw_out_data[LG+7:8],
                                           r_k_sum[BW], w_ok, w_in_half, w2_in_half, m_axi_awready,
                                           m_axi_wready, m_axi_bvalid, m_axi_bresp};
    assign w_out_data = w_h0x[DATA_W+KEEP_W+1:1];
    ddp_rx_fifo2 #(.WIDTH(DATA_W + KEEP_W + 2), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data({w_in_data, 1'b0}), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2({w2_in_data, w_in_data[0]}), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_h0x), .out_valid(w_out_valid), .out_ready(r_take),
        .out_data2(w_h1), .out_valid2(w_h1v), .out_ready2(r_two)
    );
    always @* begin
        r_k_next = r_k_reg;
        r_nb_next = r_nb_reg;
        r_b_next = r_b_reg;
        r_one_next = r_one_reg;
        if (r_take) begin
            r_k_next = r_last ? {BW{1'b0}} : r_k_sum[BW-1:0];
        end
        if (r_burst) begin
            r_nb_next = r_nb;
        end
        r_b_next = r_b_reg + (r_burst ? B1 : B0) - (b_go ? B1 : B0);
        r_one_next = r_go && !m_wr_ready && !r_two;
    end

    always @(posedge clk) begin
        r_k_reg <= r_k_next;
        r_nb_reg <= r_nb_next;
        r_b_reg <= r_b_next;
        r_one_reg <= r_one_next;
        if (rst) begin
            r_k_reg <= {BW{1'b0}};
            r_b_reg <= B0;
            r_one_reg <= 1'b0;
        end
    end
    assign m_wr_addr = r_h0cont ? {r_nb_reg, {(BW+LG){1'b0}}} : {aw_out_data[ADDR_W+8-1:8+LG+BW], r_line, {LG{1'b0}}};
    assign m_wr_data = {r_two ? w_h1[DATA_W+KEEP_W+1:KEEP_W+2] : {DATA_W{1'b0}}, w_out_data[DATA_W+KEEP_W:KEEP_W+1]};
    assign m_wr_strb = {r_two ? w_h1[KEEP_W+1:2] : {KEEP_W{1'b0}}, w_out_data[KEEP_W:1]};
    assign m_wr_last = r_last;
    assign m_wr_valid = r_go;
    assign aw_pop = r_burst;
    assign b_valid = r_b_reg != B0;
    assign b_resp = 2'b00;
    assign w_out_last = 1'b0;
    assign m_axi_awvalid = 1'b0;
    assign m_axi_awaddr = {ADDR_W{1'b0}};
    assign m_axi_awlen = 8'd0;
    assign m_axi_awsize = 3'd0;
    assign m_axi_wdata = {AXI_W{1'b0}};
    assign m_axi_wstrb = {(AXI_W/8){1'b0}};
    assign m_axi_wlast = 1'b0;
    assign m_axi_wvalid = 1'b0;
end
endgenerate

always @* begin
    w_credit_next = w_credit_reg;
    w_credit_next = w_credit_reg + ((m_axi_awvalid && m_axi_awready) ? 5'd1 : 5'd0)
        - (w_out_last ? 5'd1 : 5'd0);
end

always @(posedge clk) begin
    w_credit_reg <= w_credit_next;
    if (rst) begin
        w_credit_reg <= 5'd0;
    end
end


ddp_rx_fifo #(.WIDTH(RF_W), .AW(REC_AW)) rec_fifo (
    .clk(clk), .rst(rst),
    .in_data(rf_in_data), .in_valid(rf_in_valid), .in_data2(rf_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[1]),
    .in_ready(rf_in_ready),
    .out_data(rf_out_data), .out_valid(rf_out_valid), .out_ready(rf_out_ready)
);

// Bursts whose B response is outstanding: the connection of each, in AW
// order (B responses come in that order: one AXI ID). aw_cnt counts the
// bursts queued, b_cnt the B responses taken; a delivery record carries
// aw_cnt at its push, and is delivered only once b_cnt has reached it.

ddp_rx_fifo #(.WIDTH(CONN_W), .AW(BQ_AW)) bq_fifo (
    .clk(clk), .rst(rst),
    .in_data(d_conn_reg), .in_valid(aw_in_valid), .in_data2(d_conn_reg), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[2]),
    .in_ready(bq_in_ready),
    .out_data(bq_out_data), .out_valid(bq_out_valid), .out_ready(b_go)
);

always @* begin
    aw_cnt_next = aw_cnt_reg;
    b_cnt_next = b_cnt_reg;
    b_cnt1_next = b_cnt1_reg;
    if (aw_in_valid && aw_in_ready) begin
        aw_cnt_next = aw_cnt_reg + 1'b1;
    end
    if (b_go) begin
        b_cnt_next = b_cnt1_reg;
        b_cnt1_next = b_cnt1_reg + 1'b1;
    end
end

always @(posedge clk) begin
    aw_cnt_reg <= aw_cnt_next;
    b_cnt_reg <= b_cnt_next;
    b_cnt1_reg <= b_cnt1_next;
    if (rst) begin
        aw_cnt_reg <= 0;
        b_cnt_reg <= 0;
        b_cnt1_reg <= 1;
    end
end

// Both queues empty (out_valid is their not-empty flag, a register): every
// burst's AW and every W beat (or request) has been taken by the port.
assign wq_busy = aw_out_valid || w_out_valid;

// Not needed here: fifo_ready2_unused.
wire unused_ok = &{1'b0, fifo_ready2_unused};
endmodule

`resetall
