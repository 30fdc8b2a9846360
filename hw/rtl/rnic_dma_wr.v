// rnic_dma_wr: the device's DMA write engine (docs/device.md, "DMA"). It
// serves N_WR write clients (the CQ writer, the event writer, later the
// exception path): each request is checked against the DMA windows, its
// lane-0 aligned data realigned to the address and written in AXI4 bursts
// with exact byte strobes, and its done given once every B response of it
// is in. Beside the clients, one AXI4 write slave port passes another
// master's bursts through (ddp_rx's placement writes), arbitrated with the
// clients' bursts burst by burst onto the one AXI4 write master.
//
// Ports (flat vectors: client i's signals in slice i):
//   wr_req_*        request, valid/ready: addr [63:0] (any alignment), len
//                   [31:0] (octets, >= 1), what [2:0] (the DMA_REFUSED "what
//                   for" code). Arbitrated round-robin, one request a time.
//   wr_*            the request's data, one frame per request, after or with
//                   its request: data lane-0 aligned (octet 0 of the request
//                   in bits [7:0] of the first beat); keep and last are not
//                   looked at: the request's length decides how many beats
//                   (ceil(len / (DATA_W/8))) are taken.
//   wr_done_*       one per request, in request order per client: err is
//                   set when the window check refused the request (nothing
//                   written; its data still taken) or a B response of it was
//                   an error (SLVERR, DECERR). Done comes after every B
//                   response of the request.
//   win_wr_*        the window table, from rnic_admin (as rnic_dma_rd's).
//   ref_*           refusal report: one per refused request (what, addr,
//                   len as requested), toward the event writer, once the
//                   request's data is taken.
//   s_axi_aw*, w*, b*  AXI4 write slave, the pass-through (ddp_rx's m_axi:
//                   1-bit ID, DATA_W-wide data, so ddp_rx with AXI_W =
//                   DATA_W): its bursts go to m_axi as they come (AWID
//                   replaced by 0, the B response's ID restored), each
//                   window-checked as it is granted: the burst's beats
//                   [A, A + (AWLEN + 1) << AWSIZE) inside one (A: AWADDR
//                   rounded down to the beat)
//                   window (windows are whole 4 KiB pages and a burst
//                   never crosses one, so the beats' octets are what the
//                   strobes could touch). A refused burst is not issued:
//                   its W beats are taken and dropped, its B response is
//                   SLVERR (after its last W beat, in AW order with the
//                   others), and it is reported on pref_*. ddp_rx's
//                   addresses come from MR entries that rnic_admin checked
//                   at MR_WRITE, so only a window cleared since (the
//                   model's per-access check, DMA_REFUSED) is refused here.
//                   Its W beats are taken only after its AW (ddp_rx waits
//                   for AWREADY anyway).
//   pref_*          pass-through refusal report (valid/ready): one per
//                   refused burst (the pass-through's next burst waits
//                   while a report is not taken), its AWADDR
//                   rounded down to the beat, and its octets ((AWLEN + 1)
//                   << AWSIZE).
//   m_axi_aw*, w*, b*  AXI4 write master: INCR bursts of full-width beats,
//                   AWID 0 (one ID: B responses in AW order), AWCACHE 0011,
//                   AWPROT 010 for the clients' bursts (the pass-through's
//                   own AWLEN, AWSIZE, AWBURST, AWCACHE, AWPROT); a client
//                   burst never crosses a 4 KiB boundary (AXI4 A3.4.1) and
//                   has at most 256 beats; its W strobes are exactly the
//                   request's octets.
//
// Arbitration: the clients' engine (one request at a time) and the
// pass-through alternate burst by burst when both have one; a burst's W
// beats all go before the next burst's (W in AW order). B responses are
// routed by a queue of the bursts in AW order (2^BQ_LOG2 bursts
// outstanding at most; AW waits when it is full). The pass-through's B
// responses are taken off m_axi as they come, into a queue of their own
// (2^BQ_LOG2 deep) that the pass-through master empties at its own pace:
// a master that holds BREADY never holds the clients' B responses behind
// its own. (ddp_rx holds BREADY while its oldest ULPDU waits to be
// delivered, and delivery can wait for a completion that a client of this
// engine writes: with one shared B channel that was a deadlock, found by
// the run-time mirror's pace, driver/mirror.) The pass-through's bursts
// granted and not yet answered to its master are at most the queue's
// depth, so the queue never fills: its AW waits instead.
//
// The window check: as rnic_dma_rd's ([addr, addr + len) inside one
// non-empty window; an end past 2^64 refused).
//
// Cycles and throughput: two stages. The check takes a request 3 clocks
// (grant, end address, window check) and holds it until the data stage
// is free; the data stage takes it in the clock the previous request's
// last W beat goes (or a refused one's report), issues its first AW the
// next clock and its W beats one a clock from the clock after, bursts back
// to back (the next burst's size is computed the clock after the current
// one's grant, and it is granted in the clock the current one's last W
// beat goes): one idle W clock between long requests. Done follows
// a request's last B response by one clock. tests/dma measures beats per
// clock on long requests.
//
// Limits: DATA_W 64..512; N_WR 1..16; len >= 1; 2^OUT_LOG2 requests
// between dispatch and done.
//
// Verification: tests/dma (cocotb, Verilator): random requests from every
// client at once and random pass-through bursts (cocotbext-axi's AxiMaster)
// against AxiRamWrite with random back-pressure, every octet of memory
// checked; window refusals; an AXI error response; the protocol checkers on
// every port.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_dma_wr #(
    parameter DATA_W   = 64,
    parameter N_WR     = 2,
    parameter WIN_W    = 4,
    parameter ID_W     = 1,
    parameter OUT_LOG2 = 3,
    parameter BQ_LOG2  = 4
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [N_WR-1:0]         wr_req_valid,
    output wire [N_WR-1:0]         wr_req_ready,
    input  wire [N_WR*64-1:0]      wr_req_addr,
    input  wire [N_WR*32-1:0]      wr_req_len,
    input  wire [N_WR*3-1:0]       wr_req_what,

    input  wire [N_WR-1:0]         wr_valid,
    output wire [N_WR-1:0]         wr_ready,
    input  wire [N_WR*DATA_W-1:0]  wr_data,
    input  wire [N_WR*DATA_W/8-1:0] wr_keep,
    input  wire [N_WR-1:0]         wr_last,

    output wire [N_WR-1:0]         wr_done_valid,
    input  wire [N_WR-1:0]         wr_done_ready,
    output wire [N_WR-1:0]         wr_done_err,

    input  wire                    win_wr_valid,
    input  wire [WIN_W-1:0]        win_wr_slot,
    input  wire [63:0]             win_wr_addr,
    input  wire [63:0]             win_wr_len,

    output wire                    ref_valid,
    input  wire                    ref_ready,
    output wire [2:0]              ref_what,
    output wire [63:0]             ref_addr,
    output wire [31:0]             ref_len,

    output wire                    pref_valid,
    input  wire                    pref_ready,
    output wire [63:0]             pref_addr,
    output wire [31:0]             pref_len,

    input  wire [0:0]              s_axi_awid,
    input  wire [63:0]             s_axi_awaddr,
    input  wire [7:0]              s_axi_awlen,
    input  wire [2:0]              s_axi_awsize,
    input  wire [1:0]              s_axi_awburst,
    input  wire [3:0]              s_axi_awcache,
    input  wire [2:0]              s_axi_awprot,
    input  wire                    s_axi_awvalid,
    output wire                    s_axi_awready,
    input  wire [DATA_W-1:0]       s_axi_wdata,
    input  wire [DATA_W/8-1:0]     s_axi_wstrb,
    input  wire                    s_axi_wlast,
    input  wire                    s_axi_wvalid,
    output wire                    s_axi_wready,
    output wire [0:0]              s_axi_bid,
    output wire [1:0]              s_axi_bresp,
    output wire                    s_axi_bvalid,
    input  wire                    s_axi_bready,

    output wire [ID_W-1:0]         m_axi_awid,
    output wire [63:0]             m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire                    m_axi_awlock,
    output wire [3:0]              m_axi_awcache,
    output wire [2:0]              m_axi_awprot,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [DATA_W-1:0]       m_axi_wdata,
    output wire [DATA_W/8-1:0]     m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [ID_W-1:0]         m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready
);
initial begin
    if ((DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) || N_WR < 1 || N_WR > 16 ||
        WIN_W < 1 || WIN_W > 8 || ID_W < 1 || OUT_LOG2 < 1 || OUT_LOG2 > 6 || BQ_LOG2 < 1 || BQ_LOG2 > 8) begin
        $error("rnic_dma_wr: DATA_W 64/128/256/512, N_WR 1..16, WIN_W 1..8, ID_W >= 1, OUT_LOG2 1..6, BQ_LOG2 1..8; got %0d, %0d, %0d, %0d, %0d, %0d",
               DATA_W, N_WR, WIN_W, ID_W, OUT_LOG2, BQ_LOG2);
        $finish;
    end
end

localparam BYTES = DATA_W / 8;
localparam LGB = $clog2(BYTES);
localparam CL_W = N_WR > 1 ? $clog2(N_WR) : 1;
localparam WINDOWS = 1 << WIN_W;
localparam DEPTH = 1 << OUT_LOG2;
localparam BQ_DEPTH = 1 << BQ_LOG2;
localparam [12:0] PAGE_BEATS = 13'd4096 >> LGB;
localparam [32:0] BM1 = BYTES - 1;

// --- the window table ------------------------------------------------------------
reg [63:0] win_a [0:WINDOWS-1];
reg [63:0] win_e [0:WINDOWS-1];
reg [WINDOWS-1:0] win_nz;
always @(posedge clk) begin
    if (win_wr_valid) begin
        win_a[win_wr_slot] <= win_wr_addr;
        win_e[win_wr_slot] <= win_wr_addr + win_wr_len;
        win_nz[win_wr_slot] <= win_wr_len != 64'd0;
    end
    if (rst) win_nz <= {WINDOWS{1'b0}};
end

// --- the request side ------------------------------------------------------------
// Two stages: the check (grant, end, window check; then the request
// waits in HOLD) and the data (its bursts and W beats, or for a refused
// request its data taken, then the report). The check of the next request
// runs while the data stage writes the current one.
localparam [1:0] A_IDLE = 2'd0, A_END = 2'd1, A_CHK = 2'd2, A_HOLD = 2'd3;
localparam [1:0] B_FREE = 2'd0, B_DATA = 2'd1, B_DRAIN = 2'd2, B_REF = 2'd3;
reg [1:0]       sta, stb;
reg [CL_W-1:0]  rr;
reg [CL_W-1:0]  q_cl;
reg [63:0]      q_addr;
reg [31:0]      q_len;
reg [2:0]       q_what;
reg [64:0]      q_end;
reg             q_ok;
reg [32:0]      q_inb, q_memb;     // client beats, W beats (registered in A_END)
reg             q_in1, q_mem1;     // each == 1
reg [8:0]       q_n1;              // the first burst's beats
reg             q_last1;           // ... all of them
reg [CL_W-1:0]  d_cl;              // the data stage's request
reg [63:0]      d_addr;
reg [31:0]      d_len;
reg [2:0]       d_what;

reg [CL_W-1:0]  gnt;
reg             gnt_any;
integer k;
always @* begin
    gnt = {CL_W{1'b0}};
    gnt_any = 1'b0;
    for (k = N_WR - 1; k >= 0; k = k - 1)
        if (wr_req_valid[k]) begin
            gnt = k[CL_W-1:0];
            gnt_any = 1'b1;
        end
    for (k = N_WR - 1; k >= 0; k = k - 1)
        if (wr_req_valid[k] && k[CL_W:0] >= {1'b0, rr}) gnt = k[CL_W-1:0];
end
wire take_req = sta == A_IDLE && gnt_any;

reg hit;
integer wi;
always @* begin
    hit = 1'b0;
    for (wi = 0; wi < WINDOWS; wi = wi + 1)
        if (win_nz[wi] && q_addr >= win_a[wi] && q_end <= {1'b0, win_e[wi]}) hit = 1'b1;
end

// The pass-through burst offered on s_axi_aw*: its beats' end, and the
// window check (as for a client request), in the clock it is granted.
// (The beats' octets: from AWADDR rounded down to the beat; ddp_rx's
// bursts are of full-width beats, AWSIZE = log2(DATA_W / 8).)
wire [63:0] pt_addr = {s_axi_awaddr[63:LGB], {LGB{1'b0}}};
wire [64:0] pt_bytes = {57'd0, s_axi_awlen} + 65'd1 << s_axi_awsize;
wire [64:0] pt_end = {1'b0, pt_addr} + pt_bytes;
reg pt_hit;
integer pi_;
always @* begin
    pt_hit = 1'b0;
    for (pi_ = 0; pi_ < WINDOWS; pi_ = pi_ + 1)
        if (win_nz[pi_] && pt_addr >= win_a[pi_] && pt_end <= {1'b0, win_e[pi_]}) pt_hit = 1'b1;
end

// The order queue: {client, refused}, one entry per request, dispatch order.
reg [CL_W:0]     oq [0:DEPTH-1];
reg [OUT_LOG2:0] oqw, oqr;
wire oq_full  = (oqw ^ oqr) == {1'b1, {OUT_LOG2{1'b0}}};
wire oq_empty = oqw == oqr;

wire [LGB-1:0]  q_off = q_addr[LGB-1:0];
wire [32:0]     q_mem_beats = ({1'b0, q_len} + {{(33 - LGB){1'b0}}, q_off} + BM1) >> LGB;
wire [32:0]     q_in_beats  = ({1'b0, q_len} + BM1) >> LGB;
wire [LGB-1:0]  q_end_off   = q_off + q_len[LGB-1:0];   // (off + len) mod BYTES

// The request being written: the burst splitter and the realigner.
reg [63:0]      sp_addr;           // the next burst's address (beat aligned)
reg [32:0]      sp_left;           // beats not yet in a granted burst
reg [8:0]       sp_nr;             // the next burst's beats, computed the clock before
reg             sp_nv, sp_lastr;   // sp_nr valid; it is the request's last burst
reg             sp_nz;             // sp_left != 0
reg [32:0]      in_left;           // client beats not yet taken
reg [32:0]      out_left;          // W beats not yet sent
reg             in_nz, in_one;     // in_left != 0, == 1; out_left == 1 (kept beside
reg             out_one;           // the counts, for timing)
reg             w_first;           // the next W beat is the request's first
reg [LGB-1:0]   w_off, w_end_off;
reg [DATA_W-1:0] prev;

reg             pref_v;
reg [63:0]      pref_a;
reg [31:0]      pref_l;
reg             ref_v;
reg [2:0]       ref_w;
reg [63:0]      ref_a;
reg [31:0]      ref_l;

// --- the arbiter: the clients' engine (CE) and the pass-through (PT) --------------
// The bursts in AW order: {refused, pass-through, its AWID, the request's
// last burst} (refused: a pass-through burst the window check refused).
reg [3:0]        bq [0:BQ_DEPTH-1];
reg [BQ_LOG2:0]  bqw, bqr;
wire bq_full  = (bqw ^ bqr) == {1'b1, {BQ_LOG2{1'b0}}};
wire bq_empty = bqw == bqr;
// The pass-through's B responses taken off m_axi (or its refused bursts'
// own), {BID, BRESP}, until its master takes them; pt_out counts its
// bursts from grant to that (<= BQ_DEPTH: pb never overflows).
reg [2:0]        pb [0:BQ_DEPTH-1];
reg [BQ_LOG2:0]  pbw, pbr, pt_out;
wire pb_empty = pbw == pbr;
wire pt_room  = !pt_out[BQ_LOG2];   // (pt_out < BQ_DEPTH)
wire s_b_fire = !pb_empty && s_axi_bready;

reg             aw_v;
reg [63:0]      aw_addr;
reg [7:0]       aw_len;
reg [2:0]       aw_size;
reg [1:0]       aw_burst;
reg [3:0]       aw_cache;
reg [2:0]       aw_prot;
reg             w_busy;            // a granted burst's W beats are going
reg             w_pt;              // ... the pass-through's
reg             w_drop;            // ... a refused one's: taken, not sent
reg [BQ_LOG2:0] rdone;             // refused bursts whose W beats are all taken, B not yet given
reg [8:0]       w_left;            // CE: the burst's W beats still to go
reg             last_pt;           // the last grant went to the pass-through

wire [12:0] sp_to4k = PAGE_BEATS - {{(LGB + 1){1'b0}}, sp_addr[11:LGB]};
reg  [8:0]  sp_n;
always @* begin
    sp_n = 9'd256;
    if (sp_to4k < 13'd256) sp_n = sp_to4k[8:0];
    if (sp_left < {24'd0, sp_n}) sp_n = sp_left[8:0];
end

// CE's W beat: out = the client's beats shifted to the address.
wire             cur_v     = wr_valid[d_cl];
wire [DATA_W-1:0] cur_d    = wr_data[d_cl * DATA_W +: DATA_W];
wire             need_cur  = in_nz;
wire             ce_w_v    = stb == B_DATA && w_busy && !w_pt && (!need_cur || cur_v);
wire             ce_w_last = w_left == 9'd1;
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_W-1:0] ce_sh  = {need_cur ? cur_d : {DATA_W{1'b0}}, prev} << {w_off, 3'b000};   // its high half
/* verilator lint_on UNUSEDSIGNAL */
wire [BYTES-1:0] all_ones  = {BYTES{1'b1}};
wire [BYTES-1:0] ce_strb   = (w_first ? all_ones << w_off : all_ones) &
                             ((out_one && w_end_off != {LGB{1'b0}}) ? ~(all_ones << w_end_off) : all_ones);

wire m_w_v    = w_busy && !w_drop && (w_pt ? s_axi_wvalid : ce_w_v);
wire m_w_last = w_pt ? s_axi_wlast : ce_w_last;
wire w_fire   = m_w_v && m_axi_wready;
wire drop_fire = w_busy && w_drop && s_axi_wvalid;   // a refused burst's W beat, taken
wire w_end    = (w_fire || drop_fire) && m_w_last;   // a burst's last W beat goes
wire ce_fire  = w_fire && !w_pt;
wire ce_take  = ce_fire && need_cur;

// A grant: when no burst's W is going, or its last beat goes now, and the
// AW register is free, and the burst queue has room.
wire ce_aw   = stb == B_DATA && sp_nz && sp_nv;
wire can_gnt = (!w_busy || w_end) && (!aw_v || m_axi_awready) && !bq_full;
wire gnt_pt  = can_gnt && s_axi_awvalid && (!ce_aw || !last_pt) && !pref_v && pt_room;
wire gnt_ce  = can_gnt && ce_aw && !gnt_pt;

// Done: the order queue's head, complete when refused or when its last B
// response is in (berr holds one err bit per such request, in order).
reg [DEPTH-1:0]  berr;
reg [OUT_LOG2:0] bew, ber;
reg              b_acc;            // an error response among the request's bursts so far
wire [CL_W:0]    oh = oq[oqr[OUT_LOG2-1:0]];
wire [CL_W-1:0]  oh_cl = oh[CL_W:1];
wire             oh_ref = oh[0];
wire             be_empty = bew == ber;
wire             done_v = !oq_empty && (oh_ref || !be_empty);
wire             done_err = oh_ref || berr[ber[OUT_LOG2-1:0]];
wire             done_fire = done_v && wr_done_ready[oh_cl];

wire [3:0]       bh = bq[bqr[BQ_LOG2-1:0]];
wire             bh_ref = bh[3];
wire             bh_pt = bh[2];
// A refused burst's B response is this engine's own, once its W beats are in.
wire             b_v = !bq_empty && (bh_ref ? rdone != {(BQ_LOG2 + 1){1'b0}} : m_axi_bvalid);
wire             b_fire = b_v;   // (a pass-through one into pb: never full)
wire             m_b_fire = b_fire && !bh_ref;

// The first burst's beats, from the checked request; the next ones are
// computed in the clock after a burst's grant (the loop through the
// address and the minimum cut in two).
wire [12:0] q_to4k = PAGE_BEATS - {{(LGB + 1){1'b0}}, q_addr[11:LGB]};
reg  [8:0]  q_first;
always @* begin
    q_first = 9'd256;
    if (q_to4k < 13'd256) q_first = q_to4k[8:0];
    if (q_memb < {24'd0, q_first}) q_first = q_memb[8:0];
end

wire b_free = stb == B_FREE || (stb == B_DATA && ce_fire && out_one);
wire hand = sta == A_HOLD && b_free && !oq_full;

always @(posedge clk) begin
    case (sta)
    A_IDLE: if (gnt_any) begin
        q_cl <= gnt;
        q_addr <= wr_req_addr[gnt * 64 +: 64];
        q_len <= wr_req_len[gnt * 32 +: 32];
        q_what <= wr_req_what[gnt * 3 +: 3];
        rr <= ({{(32 - CL_W){1'b0}}, gnt} == N_WR - 1) ? {CL_W{1'b0}} : gnt + 1'b1;
        sta <= A_END;
    end
    A_END: begin
        q_end <= {1'b0, q_addr} + {33'd0, q_len};
        q_inb <= q_in_beats;
        q_memb <= q_mem_beats;
        sta <= A_CHK;
    end
    A_CHK: begin
        q_ok <= hit;
        q_in1 <= q_inb == 33'd1;
        q_mem1 <= q_memb == 33'd1;
        q_n1 <= q_first;
        q_last1 <= q_memb == {24'd0, q_first};
        sta <= A_HOLD;
    end
    default: ;   // A_HOLD: until the data stage takes the request (below)
    endcase

    if (stb == B_DATA && sp_nz && !sp_nv) begin
        sp_nr <= sp_n;
        sp_lastr <= sp_left == {24'd0, sp_n};
        sp_nv <= 1'b1;
    end
    case (stb)
    B_DATA: begin
        if (ce_fire) begin
            out_left <= out_left - 1'b1;
            out_one <= out_left == 33'd2;
            w_first <= 1'b0;
            if (out_one) stb <= B_FREE;
        end
        if (ce_take) begin
            in_left <= in_left - 1'b1;
            in_nz <= !in_one;
            in_one <= in_left == 33'd2;
            prev <= cur_d;
        end
    end
    B_DRAIN: begin
        if (cur_v) begin
            in_left <= in_left - 1'b1;
            in_nz <= !in_one;
            in_one <= in_left == 33'd2;
            if (in_one) stb <= B_REF;
        end
    end
    B_REF: if (!oq_full && !ref_v) begin
        oq[oqw[OUT_LOG2-1:0]] <= {d_cl, 1'b1};
        oqw <= oqw + 1'b1;
        ref_v <= 1'b1;
        ref_w <= d_what;
        ref_a <= d_addr;
        ref_l <= d_len;
        stb <= B_FREE;
    end
    default: ;   // B_FREE
    endcase
    // The data stage takes the checked request when free, or in the clock
    // its last W beat goes (these assignments come last and win).
    if (hand) begin
        d_cl <= q_cl;
        d_addr <= q_addr;
        d_len <= q_len;
        d_what <= q_what;
        in_left <= q_inb;
        in_nz <= 1'b1;                                   // len >= 1
        in_one <= q_in1;
        sta <= A_IDLE;
        if (q_ok) begin
            oq[oqw[OUT_LOG2-1:0]] <= {q_cl, 1'b0};
            oqw <= oqw + 1'b1;
            sp_addr <= {q_addr[63:LGB], {LGB{1'b0}}};
            sp_left <= q_memb;
            sp_nr <= q_n1;
            sp_lastr <= q_last1;
            sp_nv <= 1'b1;
            sp_nz <= 1'b1;
            out_left <= q_memb;
            out_one <= q_mem1;
            w_first <= 1'b1;
            w_off <= q_off;
            w_end_off <= q_end_off;
            stb <= B_DATA;
        end else begin
            stb <= B_DRAIN;
        end
    end
    if (ref_v && ref_ready) ref_v <= 1'b0;

    // Bursts.
    if (aw_v && m_axi_awready) aw_v <= 1'b0;
    if (w_end) w_busy <= 1'b0;
    rdone <= rdone + {{BQ_LOG2{1'b0}}, drop_fire && s_axi_wlast} - {{BQ_LOG2{1'b0}}, b_fire && bh_ref};
    if (pref_ready) pref_v <= 1'b0;
    if (ce_fire) w_left <= w_left - 1'b1;
    if (gnt_pt) begin
        aw_v <= pt_hit;
        w_drop <= !pt_hit;
        pref_v <= !pt_hit;
        pref_a <= pt_addr;
        pref_l <= pt_bytes[31:0];
        aw_addr <= s_axi_awaddr;
        aw_len <= s_axi_awlen;
        aw_size <= s_axi_awsize;
        aw_burst <= s_axi_awburst;
        aw_cache <= s_axi_awcache;
        aw_prot <= s_axi_awprot;
        bq[bqw[BQ_LOG2-1:0]] <= {!pt_hit, 1'b1, s_axi_awid, 1'b0};
        bqw <= bqw + 1'b1;
        w_busy <= 1'b1;
        w_pt <= 1'b1;
        last_pt <= 1'b1;
    end
    if (gnt_ce) begin
        aw_v <= 1'b1;
        aw_addr <= sp_addr;
        aw_len <= sp_nr[7:0] - 1'b1;
        aw_size <= LGB[2:0];
        aw_burst <= 2'b01;
        aw_cache <= 4'b0011;
        aw_prot <= 3'b010;
        bq[bqw[BQ_LOG2-1:0]] <= {3'b000, sp_lastr};
        w_drop <= 1'b0;
        bqw <= bqw + 1'b1;
        w_busy <= 1'b1;
        w_pt <= 1'b0;
        w_left <= sp_nr;
        last_pt <= 1'b0;
        sp_addr <= sp_addr + ({55'd0, sp_nr} << LGB);
        sp_left <= sp_left - {24'd0, sp_nr};
        sp_nv <= 1'b0;
        sp_nz <= !sp_lastr;
    end

    // B responses; done.
    if (b_fire) begin
        bqr <= bqr + 1'b1;
        if (bh_pt) begin
            pb[pbw[BQ_LOG2-1:0]] <= {bh[1], bh_ref ? 2'b10 : m_axi_bresp};   // SLVERR for a refused burst
            pbw <= pbw + 1'b1;
        end
        if (!bh_pt) begin   // (a client burst: never refused here)
            b_acc <= bh[0] ? 1'b0 : b_acc || m_axi_bresp[1];
            if (bh[0]) begin
                berr[bew[OUT_LOG2-1:0]] <= b_acc || m_axi_bresp[1];
                bew <= bew + 1'b1;
            end
        end
    end
    if (s_b_fire) pbr <= pbr + 1'b1;
    pt_out <= pt_out + {{BQ_LOG2{1'b0}}, gnt_pt} - {{BQ_LOG2{1'b0}}, s_b_fire};
    if (done_fire) begin
        oqr <= oqr + 1'b1;
        if (!oh_ref) ber <= ber + 1'b1;
    end

    if (rst) begin
        sta <= A_IDLE;
        stb <= B_FREE;
        rr <= {CL_W{1'b0}};
        oqw <= {(OUT_LOG2 + 1){1'b0}};
        oqr <= {(OUT_LOG2 + 1){1'b0}};
        bew <= {(OUT_LOG2 + 1){1'b0}};
        ber <= {(OUT_LOG2 + 1){1'b0}};
        bqw <= {(BQ_LOG2 + 1){1'b0}};
        bqr <= {(BQ_LOG2 + 1){1'b0}};
        pbw <= {(BQ_LOG2 + 1){1'b0}};
        pbr <= {(BQ_LOG2 + 1){1'b0}};
        pt_out <= {(BQ_LOG2 + 1){1'b0}};
        b_acc <= 1'b0;
        ref_v <= 1'b0;
        pref_v <= 1'b0;
        rdone <= {(BQ_LOG2 + 1){1'b0}};
        aw_v <= 1'b0;
        w_busy <= 1'b0;
        last_pt <= 1'b0;
        sp_nz <= 1'b0;
        sp_nv <= 1'b0;
    end
end

genvar gi;
generate for (gi = 0; gi < N_WR; gi = gi + 1) begin : g_cl
    localparam [CL_W-1:0] ME = gi;
    assign wr_req_ready[gi] = take_req && gnt == ME;
    assign wr_ready[gi] = d_cl == ME && ((stb == B_DATA && ce_take) || stb == B_DRAIN);
    assign wr_done_valid[gi] = done_v && oh_cl == ME;
    assign wr_done_err[gi] = done_err;
end endgenerate

assign ref_valid = ref_v;
assign ref_what = ref_w;
assign ref_addr = ref_a;
assign ref_len = ref_l;
assign pref_valid = pref_v;
assign pref_addr = pref_a;
assign pref_len = pref_l;

assign s_axi_awready = gnt_pt;
assign s_axi_wready = w_busy && w_pt && (w_drop || m_axi_wready);
assign s_axi_bid = pb[pbr[BQ_LOG2-1:0]][2];
assign s_axi_bresp = pb[pbr[BQ_LOG2-1:0]][1:0];
assign s_axi_bvalid = !pb_empty;

assign m_axi_awid = {ID_W{1'b0}};
assign m_axi_awaddr = aw_addr;
assign m_axi_awlen = aw_len;
assign m_axi_awsize = aw_size;
assign m_axi_awburst = aw_burst;
assign m_axi_awlock = 1'b0;
assign m_axi_awcache = aw_cache;
assign m_axi_awprot = aw_prot;
assign m_axi_awvalid = aw_v;
assign m_axi_wdata = w_pt ? s_axi_wdata : ce_sh[2*DATA_W-1:DATA_W];
assign m_axi_wstrb = w_pt ? s_axi_wstrb : ce_strb;
assign m_axi_wlast = m_w_last;
assign m_axi_wvalid = m_w_v;
assign m_axi_bready = m_b_fire;

// The clients' keep and last (the length decides) and BID (one ID) are
// not looked at.
/* verilator lint_off UNUSEDSIGNAL */
wire unused = &{1'b0, wr_keep, wr_last, m_axi_bid, m_axi_bresp[0]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
