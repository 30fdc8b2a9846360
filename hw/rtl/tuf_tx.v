// tuf_tx: the TUF transmitter. ULPDUs (DDP segments) in, TUF FPDUs out,
// octet for octet what iwarp/tuf's Sender produces without packing
// (tuf.Config{Pack: false}, docs/tuf.md "Wire format"): per ULPDU one FPDU
// of an 8-octet header (Length, big-endian, = ULPDU length + 4; then the
// connection's 48-bit key, big-endian; draft-ietf-tsvwg-tcp-ulp-frame-01
// 4.1.1), the ULPDU, and the CRC32c trailer over header and ULPDU, least
// significant octet first (as RFC 5044 4.4 sends MPA's CRC). No pad, no
// markers: the trailer follows the last ULPDU octet in whatever lane it
// falls.
//
//   s_axis -> b0 -> frame -> +-> crc32c ------+-> merge -> m_axis
//             key     header,  |   (CRC of      |   CRC into the
//             table   shift,   +-> FIFO --------+   trailer lanes
//             read    trailer
//                     lanes
//
// Input, s_axis: one frame per ULPDU, lane-0 aligned (every beat full but
// the last, whose tkeep is a run from lane 0). tuser, sampled on the first
// beat: {conn[CONN_W-1:0], len[15:0]}:
//   len   the ULPDU's length in octets, 1 .. 65531 (tuf.MaxULPDUs: the
//         16-bit Length field also counts the trailer);
//   conn  the connection, which picks the key from the table.
//
// Output, m_axis: one frame per FPDU (len + 12 octets), lane-0 aligned,
// tuser = conn. tlast ends every FPDU: a TUF sender starts a TCP segment at
// every FPDU (draft 4.2).
//
// Key table: cfg_valid/cfg_ready/cfg_conn/cfg_key write a connection's key
// (cfg_ready is always high: the table has no other writer). A frame reads
// its key when its first beat enters the block; a write must not race
// frames of the same connection inside the block (write between frames).
//
// Errors: err_valid high for one clock, err_code a bit per error found in
// that clock (two can coincide, for two frames), as in mpa_tx_frame:
//   bit 0  len is 0 or more than 65531: the frame is consumed and nothing is
//          sent for it.
//   bit 1  the frame's octet count differs from len, found 3 clocks after
//          its last beat: the FPDU has gone out with the announced Length
//          and the octets actually given (its trailer the CRC of those), so
//          the peer will refuse it; an integration fault upstream.
//
// Throughput: one output beat per clock with FPDUs back to back. An FPDU
// takes ceil((len + 12) / (DATA_W / 8)) output beats against the ULPDU's
// ceil(len / (DATA_W / 8)) input beats: s_axis_tready is low in the clocks
// where the header's and the trailer's extra beats go out. Latency: 10
// clocks from the first input beat to the first output beat, at every width
// and size (tests/tuf_tx): 1 input register, 1 framing, 7 in the FIFO (a
// beat leaves once the FIFO holds CRC_LATENCY beats or its frame's CRC is
// ready), 1 output register.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module tuf_tx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_W-1:0]     s_axis_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_tkeep,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,
    input  wire                  s_axis_tlast,
    input  wire [CONN_W+15:0]    s_axis_tuser,

    input  wire                  cfg_valid,
    output wire                  cfg_ready,
    input  wire [CONN_W-1:0]     cfg_conn,
    input  wire [47:0]           cfg_key,

    output reg  [DATA_W-1:0]     m_axis_tdata,
    output reg  [DATA_W/8-1:0]   m_axis_tkeep,
    output reg                   m_axis_tvalid,
    input  wire                  m_axis_tready,
    output reg                   m_axis_tlast,
    output reg  [CONN_W-1:0]     m_axis_tuser,

    output reg                   err_valid,
    output reg  [1:0]            err_code
);

localparam L = DATA_W / 8;        // octets per beat
localparam KEEP_LOG = $clog2(L);
localparam TL = L + 12;           // lanes of a frame's tail: 8 carried, L, 4 trailer
localparam R = 12;                // lanes of the tail past the beat
localparam [16:0] MAX_ULPDU = 17'd65531;
localparam FIFO_AW = 4;           // must hold more beats than crc32c's latency
localparam CRC_LATENCY = 7;       // crc32c: clocks from a tlast beat to its result
localparam FIFO_W = DATA_W + 2 * L + 4 + CONN_W;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("tuf_tx: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
end

// --- b0: input register, and the key read for a frame's first beat ----------

reg              in_frame;        // a frame's first beat has been taken
reg              b0_valid;
reg [DATA_W-1:0] b0_data;
reg [L-1:0]      b0_keep;
reg              b0_last;
reg              b0_first;
reg [15:0]       b0_len;
reg [15:0]       b0_lenf;         // len + 4, the header's Length
reg              b0_bad;          // len is 0 or over MAX_ULPDU
reg [CONN_W-1:0] b0_conn;
reg              key_fresh;       // key_q is b0's frame's key this clock
reg [47:0]       key_hold;        // ... and this is, after that clock

wire f_take;
assign s_axis_tready = !b0_valid || f_take;
wire b0_load = s_axis_tvalid && s_axis_tready;

// The key table is read in every clock where the input is between frames
// (rd_en a register: no path from the ready chain), at the conn of the
// first beat s_axis offers; the word read for the beat b0 takes is the
// frame's key in the next clock, and kept in key_hold after it.
wire [47:0] key_ram;
wire [15:0] len_s = s_axis_tuser[15:0];
sdp_ram #(.WIDTH(48), .ADDR_W(CONN_W)) key_table (
    .clk(clk),
    .wr_en(cfg_valid),
    .wr_addr(cfg_conn),
    .wr_data(cfg_key),
    .rd_en(!in_frame),
    .rd_addr(s_axis_tuser[CONN_W+15:16]),
    .rd_data(key_ram)
);
wire [47:0] key_q = key_fresh ? key_ram : key_hold;
assign cfg_ready = 1'b1;

always @(posedge clk) begin
    if (f_take) begin
        b0_valid <= 1'b0;
    end
    if (b0_load) begin
        b0_valid <= 1'b1;
        b0_data <= s_axis_tdata;
        b0_keep <= s_axis_tkeep;
        b0_last <= s_axis_tlast;
        b0_first <= !in_frame;
        if (!in_frame) begin
            b0_len <= len_s;
            b0_lenf <= len_s + 16'd4;
            b0_bad <= (len_s == 16'd0) || ({1'b0, len_s} > MAX_ULPDU);
            b0_conn <= s_axis_tuser[CONN_W+15:16];
        end
        in_frame <= !s_axis_tlast;
    end
    key_fresh <= b0_load && !in_frame;
    if (key_fresh) begin
        key_hold <= key_ram;
    end
    if (rst) begin
        b0_valid <= 1'b0;
        in_frame <= 1'b0;
    end
end

// --- frame: header in front, the ULPDU shifted by it, the trailer's lanes ----
//
// Every output beat is the input beat moved up eight lanes, the carry (the
// previous beat's top eight octets, or the header on a frame's first beat)
// below it. On a frame's last beat (m octets) the tail is TL lanes: the
// carry's 8, the m data octets, then the trailer's 4 (zero here; the merge
// fills them), i.e. 12 + m octets, which take one output beat or spill
// into one more (two at DATA_W = 64). Everything follows from tkeep
// without counting: tail lane j holds content (header or ULPDU) when j < 8
// or tkeep[j-8], and is a trailer lane when it holds no content but lane
// j - 4 does.

reg              dropping;        // the frame being taken is refused
reg [63:0]       carry;
reg [CONN_W-1:0] conn_q;
reg              rest_on;         // lanes of the tail are still to go out
reg [8*R-1:0]    rest_data;
reg [R-1:0]      rest_keep, rest_cont, rest_trl;
reg [1:0]        rot_q;

// The frame stage's output, into the FIFO.
reg              k_valid;
reg [DATA_W-1:0] k_data;
reg [L-1:0]      k_keep;
reg [L-1:0]      k_trl;           // trailer lanes
reg [1:0]        k_rot;           // trailer lane j holds CRC octet (j - rot) mod 4
reg              k_last;
reg              k_feed;          // the beat holds content: the CRC takes it
reg              k_cend;          // ... and the frame's content ends in it
reg [CONN_W-1:0] k_user;
wire             k_ready;

wire load = !k_valid || k_ready;
assign f_take = b0_valid && load && !rest_on;

wire [15:0] len_in = b0_len;
wire bad_len = b0_bad;
wire drop = b0_first ? bad_len : dropping;
wire [15:0] length_field = b0_lenf;
// Length then Key, big-endian, AXI octet order (tdata[7:0] first).
wire [63:0] header = {key_q[7:0], key_q[15:8], key_q[23:16], key_q[31:24], key_q[39:32], key_q[47:40],
                      length_field[7:0], length_field[15:8]};
wire [63:0] head = b0_first ? header : carry;
wire [DATA_W+63:0] shifted = {b0_data, head};

wire [TL+3:0] cont_ext = {4'h0, b0_keep, 8'hff, 4'h0};   // lane j's content at j + 4
reg  [8*TL-1:0] tail_data;
reg  [TL-1:0]   tail_keep, tail_cont, tail_trl;
integer j;
always @* begin
    for (j = 0; j < TL; j = j + 1) begin
        tail_cont[j] = cont_ext[j+4];
        tail_trl[j] = !cont_ext[j+4] && cont_ext[j];
        tail_keep[j] = cont_ext[j+4] || cont_ext[j];
        if (j < L + 8) begin
            tail_data[8*j +: 8] = cont_ext[j+4] ? shifted[8*j +: 8] : 8'h00;
        end else begin
            tail_data[8*j +: 8] = 8'h00;
        end
    end
end
// m mod 4, m the last beat's octets: the trailer starts at lane 8 + m of the
// tail, and beats start at multiples of four lanes.
reg [1:0] rot;
integer w;
always @* begin
    rot = 2'd0;
    for (w = 0; w < L / 4; w = w + 1) begin
        if (b0_keep[4*w] && !b0_keep[4*w+1]) rot = rot | 2'd1;
        if (b0_keep[4*w+1] && !b0_keep[4*w+2]) rot = rot | 2'd2;
        if (b0_keep[4*w+2] && !b0_keep[4*w+3]) rot = rot | 2'd3;
    end
end

// The rest lanes as a beat, and what stays after it (DATA_W = 64 only).
wire [DATA_W+8*R-1:0] rest_data_ext = {{DATA_W{1'b0}}, rest_data};
wire [L+R-1:0] rest_keep_ext = {{L{1'b0}}, rest_keep};
wire [L+R-1:0] rest_cont_ext = {{L{1'b0}}, rest_cont};
wire [L+R-1:0] rest_trl_ext = {{L{1'b0}}, rest_trl};

// The length check is off the datapath, as in mpa_tx_frame: a frame's last
// beat gives its beat count and m - 1 (the top lane of tkeep), compared two
// clocks later with len - 1.
reg [KEEP_LOG-1:0] top;
integer k;
always @* begin
    top = {KEEP_LOG{1'b0}};
    for (k = 0; k < L; k = k + 1) begin
        if (b0_keep[k] && (k == L - 1 || !b0_keep[(k + 1) % L])) begin
            top = top | k[KEEP_LOG-1:0];
        end
    end
end
reg [15-KEEP_LOG:0] beats;        // beats of the frame taken before this one
reg                 c1_valid, c2_valid;
reg [15:0]          c1_len, c2_lenm1;
reg [15-KEEP_LOG:0] c1_beats, c2_beats;
reg [KEEP_LOG-1:0]  c1_top, c2_top;

always @(posedge clk) begin
    err_valid <= 1'b0;
    err_code <= 2'b00;
    if (load) begin
        k_valid <= 1'b0;
    end
    if (rest_on && load) begin
        k_valid <= 1'b1;
        k_data <= rest_data_ext[DATA_W-1:0];
        k_keep <= rest_keep_ext[L-1:0];
        k_trl <= rest_trl_ext[L-1:0];
        k_rot <= rot_q;
        k_last <= !rest_keep_ext[L];
        k_feed <= rest_cont[0];
        k_cend <= rest_cont[0] && !rest_cont_ext[L];
        k_user <= conn_q;
        rest_data <= rest_data_ext[DATA_W +: 8*R];
        rest_keep <= rest_keep_ext[L +: R];
        rest_cont <= rest_cont_ext[L +: R];
        rest_trl <= rest_trl_ext[L +: R];
        rest_on <= rest_keep_ext[L];
    end else if (f_take) begin
        carry <= shifted[DATA_W +: 64];
        if (b0_first) begin
            dropping <= bad_len;
            conn_q <= b0_conn;
            beats <= 1;
        end else begin
            beats <= beats + 1'b1;
        end
        if (b0_first && bad_len) begin
            err_valid <= 1'b1;
            err_code[0] <= 1'b1;
        end
        c1_valid <= b0_last && !drop;
        c1_len <= len_in;
        c1_beats <= b0_first ? {16-KEEP_LOG{1'b0}} : beats;
        c1_top <= top;
        if (!drop) begin
            k_valid <= 1'b1;
            k_user <= b0_first ? b0_conn : conn_q;
            k_feed <= 1'b1;
            k_rot <= rot;
            rot_q <= rot;
            if (b0_last) begin
                k_data <= tail_data[DATA_W-1:0];
                k_keep <= tail_keep[L-1:0];
                k_trl <= tail_trl[L-1:0];
                k_last <= !tail_keep[L];
                k_cend <= !tail_cont[L];
                rest_on <= tail_keep[L];
                rest_data <= tail_data[8*L +: 8*R];
                rest_keep <= tail_keep[L +: R];
                rest_cont <= tail_cont[L +: R];
                rest_trl <= tail_trl[L +: R];
            end else begin
                k_data <= shifted[DATA_W-1:0];
                k_keep <= {L{1'b1}};
                k_trl <= {L{1'b0}};
                k_last <= 1'b0;
                k_cend <= 1'b0;
            end
        end
    end
    if (!f_take) begin
        c1_valid <= 1'b0;
    end
    c2_valid <= c1_valid;
    c2_lenm1 <= c1_len - 1'b1;
    c2_beats <= c1_beats;
    c2_top <= c1_top;
    if (c2_valid && c2_lenm1 != {c2_beats, c2_top}) begin
        err_valid <= 1'b1;
        err_code[1] <= 1'b1;
    end
    if (rst) begin
        c1_valid <= 1'b0;
        c2_valid <= 1'b0;
        dropping <= 1'b0;
        rest_on <= 1'b0;
        k_valid <= 1'b0;
        err_valid <= 1'b0;
    end
end

// --- CRC, with the FPDU waiting in a FIFO for it -------------------------------

// The CRC covers the header and the ULPDU: a beat's content lanes, the beat
// where the content ends closing the CRC's segment. A beat of trailer lanes
// alone is not fed to it.
wire crc_in_ready;
reg [FIFO_AW:0] wr_ptr, rd_ptr;
// The beats in the FIFO, in a register of its own, as in mpa_tx.
reg [FIFO_AW:0] fill;
wire fifo_full = fill[FIFO_AW];
wire fifo_empty = fill == {FIFO_AW+1{1'b0}};
assign k_ready = crc_in_ready && !fifo_full;
wire push = k_valid && k_ready;

wire [31:0] crc_data;
wire        crc_valid;
wire        crc_ready;
wire        crc_tid_unused;

crc32c #(.DATA_W(DATA_W), .ID_W(1)) crc (
    .clk(clk), .rst(rst),
    .s_axis_tdata(k_data), .s_axis_tkeep(k_keep & ~k_trl),
    .s_axis_tvalid(k_valid && k_feed && !fifo_full), .s_axis_tready(crc_in_ready),
    .s_axis_tlast(k_cend), .s_axis_tid(1'b0), .s_axis_tuser({32'd0, 1'b1}),
    .m_axis_crc_tdata(crc_data), .m_axis_crc_tid(crc_tid_unused), .m_axis_crc_tvalid(crc_valid),
    .m_axis_crc_tready(crc_ready)
);

reg [FIFO_W-1:0] fifo [0:(1 << FIFO_AW) - 1];
always @(posedge clk) begin
    if (push) begin
        fifo[wr_ptr[FIFO_AW-1:0]] <= {k_user, k_last, |k_trl, k_rot, k_trl, k_keep, k_data};
    end
end

wire [FIFO_W-1:0] fhead = fifo[rd_ptr[FIFO_AW-1:0]];
wire [DATA_W-1:0] h_data = fhead[DATA_W-1:0];
wire [L-1:0]      h_keep = fhead[DATA_W +: L];
wire [L-1:0]      h_trl = fhead[DATA_W+L +: L];
wire [1:0]        h_rot = fhead[DATA_W+2*L +: 2];
wire              h_need = fhead[DATA_W+2*L+2];
wire              h_last = fhead[DATA_W+2*L+3];
wire [CONN_W-1:0] h_user = fhead[DATA_W+2*L+4 +: CONN_W];

// A beat with trailer lanes leaves with the CRC (the frame's last beat
// frees it). The others leave once the FIFO holds as many beats as the CRC
// takes clocks, or once the head frame's CRC is ready (mpa_tx's rule: no gap
// in the output, no pile-up of results in crc32c).
wire out_load = !m_axis_tvalid || m_axis_tready;
wire primed = crc_valid || fill >= CRC_LATENCY;
wire pop = !fifo_empty && out_load && (h_need ? crc_valid : primed);
assign crc_ready = pop && h_last;

// The CRC in wire order (crc_data[7:0] first), rotated so that octet
// (j - rot) mod 4 sits at j mod 4.
wire [63:0] crc2 = {crc_data, crc_data};
wire [31:0] crc_rot = crc2[32 - 8 * h_rot +: 32];
reg [DATA_W-1:0] merged;
integer q;
always @* begin
    for (q = 0; q < L; q = q + 1) begin
        merged[8*q +: 8] = h_trl[q] ? crc_rot[8*(q % 4) +: 8] : h_data[8*q +: 8];
    end
end

always @(posedge clk) begin
    if (push) begin
        wr_ptr <= wr_ptr + 1'b1;
    end
    fill <= fill + {{FIFO_AW{1'b0}}, push} - {{FIFO_AW{1'b0}}, pop};
    if (out_load) begin
        m_axis_tvalid <= 1'b0;
    end
    if (pop) begin
        rd_ptr <= rd_ptr + 1'b1;
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= merged;
        m_axis_tkeep <= h_keep;
        m_axis_tlast <= h_last;
        m_axis_tuser <= h_user;
    end
    if (rst) begin
        wr_ptr <= {FIFO_AW+1{1'b0}};
        rd_ptr <= {FIFO_AW+1{1'b0}};
        fill <= {FIFO_AW+1{1'b0}};
        m_axis_tvalid <= 1'b0;
    end
end

endmodule

`resetall
