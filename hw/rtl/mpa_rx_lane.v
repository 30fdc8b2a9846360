// mpa_rx_lane: one of the two lanes of the MPA receive path. Takes the runs
// mpa_rx_walk assigns to it (a run is the part of one FPDU that one segment
// carries) and, for each run:
//   - computes its CRC32c over the words crc_lo .. crc_hi-1 of its beats
//     (markers and pad included, RFC 5044 4.4), starting afresh or, for a
//     run that continues an FPDU begun in an earlier segment, from the
//     running CRC the walker saved;
//   - packs its ULPDU octets (ulp_lo .. ulp_hi-1 of each beat) into one
//     lane-0 aligned output frame, the ULPDU piece; a run without ULPDU
//     octets (only pad, markers or the CRC) gives a frame of one beat with
//     tkeep all zero, and a frame whose octets end on a beat boundary
//     before its run ends has a last beat with tkeep all zero;
//   - when the run ends its FPDU, gives the FPDU's verdict once the CRC is
//     known: 2 if CRCs are on and the CRC word differs (MPA error 2),
//     else 3 if a marker or the ULPDU_Length was bad (MPA error 3), else 0;
//   - a run marked nopiece (a marker alone at the end of a segment, the
//     first word of the FPDU the next segment goes on with) has a CRC and
//     no frame;
//   - when the run was cut by the end of its segment, returns the running
//     CRC to the walker (wb_*), which resumes the next run of the FPDU
//     from it.
// Verdicts carry the FPDU end's number (vseq), in walker order, for mpa_rx
// to merge the two lanes' verdicts.
//
// Throughput: one input beat a clock, plus one clock for a run whose last
// beat fills more than one output beat; a three-beat output queue lets the
// lane take input while mpa_rx holds its output (up to two beats wait
// behind the head), and s_ready comes from registers. Latency: 3 clocks
// from an input beat to the output beat it completes; a verdict follows the run's last
// beat by about 9 clocks (crc32c's 7 and 2).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx_lane #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    s_valid,
    output wire                    s_ready,
    input  wire [DATA_W-1:0]       s_data,
    input  wire [$clog2(DATA_W/32):0] s_crc_lo,
    input  wire [$clog2(DATA_W/32):0] s_crc_hi,
    input  wire [$clog2(DATA_W/32)-1:0] s_crcw,
    input  wire [$clog2(DATA_W/8):0]  s_ulp_lo,
    input  wire [$clog2(DATA_W/8):0]  s_ulp_hi,
    input  wire                    s_run_first,
    input  wire                    s_run_last,
    input  wire                    s_resume,
    input  wire                    s_nopiece,
    input  wire [31:0]             s_state,
    input  wire                    s_fpdu_first,
    input  wire                    s_fpdu_end,
    input  wire [CONN_W-1:0]       s_conn,
    input  wire [15:0]             s_ulen,
    input  wire                    s_crc_en,
    input  wire                    s_mkbad,
    input  wire                    s_lenbad,
    input  wire [7:0]              s_vseq,

    output reg  [DATA_W-1:0]       m_tdata,
    output reg  [DATA_W/8-1:0]     m_tkeep,
    output reg                     m_tvalid,
    input  wire                    m_tready,
    output reg                     m_tlast,
    output reg  [CONN_W-1:0]       m_conn,
    output reg  [15:0]             m_ulen,
    output reg                     m_first,
    output reg                     m_last,

    output reg                     v_valid,
    input  wire                    v_ready,
    output reg  [CONN_W-1:0]       v_conn,
    output reg  [2:0]              v_code,
    output reg  [7:0]              v_vseq,

    output reg                     wb_valid,
    output reg  [CONN_W-1:0]       wb_conn,
    output reg  [31:0]             wb_state
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;
localparam OL = LN + 1;
localparam INFO_AW = 4;                        // runs whose CRC is in flight
localparam INFO_W = 1 + CONN_W + 1 + 1 + 1 + 32 + 8;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx_lane: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// ---- CRC ---------------------------------------------------------------------------

wire crc_ready;
wire pk_ready;
reg [INFO_AW:0] info_wr_reg, info_rd_reg;
// Full: the pointers, INFO_AW+1 bits, are 2^INFO_AW apart (mod 2^(INFO_AW+1)).
wire [INFO_AW:0] info_used = info_wr_reg - info_rd_reg;
wire info_full = info_used == {1'b1, {INFO_AW{1'b0}}};
assign s_ready = crc_ready && pk_ready && !info_full;
wire take = s_valid && s_ready;

wire [N-1:0] crc_keep;
genvar g;
generate
    for (g = 0; g < N; g = g + 1) begin : crc_lane
        localparam [LN-1:0] LANE = g;
        wire [WL-1:0] word = {1'b0, LANE[LN-1:2]};
        assign crc_keep[g] = word >= s_crc_lo && word < s_crc_hi;
    end
endgenerate

wire [31:0] crc_out;
wire        crc_out_valid;
wire        crc_out_ready;
wire        crc_tid_unused;

crc32c #(.DATA_W(DATA_W), .ID_W(1)) crc (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_data), .s_axis_tkeep(crc_keep), .s_axis_tvalid(take),
    .s_axis_tready(crc_ready), .s_axis_tlast(s_run_last), .s_axis_tid(1'b0),
    .s_axis_tuser({s_state, !s_resume}),
    .m_axis_crc_tdata(crc_out), .m_axis_crc_tid(crc_tid_unused),
    .m_axis_crc_tvalid(crc_out_valid), .m_axis_crc_tready(crc_out_ready)
);

// What the verdict needs of each run, in run order beside crc32c.
reg [INFO_W-1:0] info_mem [0:(1 << INFO_AW) - 1];
wire [31:0] rx_crc = s_data[32*s_crcw +: 32];
always @(posedge clk) begin
    if (take && s_run_last) begin
        info_mem[info_wr_reg[INFO_AW-1:0]] <=
            {s_fpdu_end, s_conn, s_crc_en, s_mkbad, s_lenbad, rx_crc, s_vseq};
    end
end
wire [INFO_W-1:0] info = info_mem[info_rd_reg[INFO_AW-1:0]];
wire              i_end = info[INFO_W-1];
wire [CONN_W-1:0] i_conn = info[INFO_W-2 -: CONN_W];
wire              i_crc_en = info[42];
wire              i_mkbad = info[41];
wire              i_lenbad = info[40];
wire [31:0]       i_crc = info[39:8];
wire [7:0]        i_vseq = info[7:0];

assign crc_out_ready = !i_end || !v_valid || v_ready;

always @(posedge clk) begin
    wb_valid <= 1'b0;
    if (v_valid && v_ready) begin
        v_valid <= 1'b0;
    end
    if (take && s_run_last) begin
        info_wr_reg <= info_wr_reg + 1'b1;
    end
    if (crc_out_valid && crc_out_ready) begin
        info_rd_reg <= info_rd_reg + 1'b1;
        if (i_end) begin
            v_valid <= 1'b1;
            v_conn <= i_conn;
            v_vseq <= i_vseq;
            v_code <= (i_crc_en && crc_out != i_crc) ? 3'd2 :
                      (i_mkbad || i_lenbad) ? 3'd3 : 3'd0;
        end else begin
            wb_valid <= 1'b1;
            wb_conn <= i_conn;
            wb_state <= crc_out;
        end
    end
    if (rst) begin
        info_wr_reg <= {(INFO_AW + 1){1'b0}};
        info_rd_reg <= {(INFO_AW + 1){1'b0}};
        v_valid <= 1'b0;
        wb_valid <= 1'b0;
    end
end

// ---- packing the ULPDU octets --------------------------------------------------------

// k1: the beat's ULPDU octets moved down to lane 0, the lanes past them
// zero (k1_keep: the lanes that hold them); with them, for the pack stage,
// where they go in the frame's beat (k1_rsel, k1_fill: see there).
reg              k1_valid;
reg [DATA_W-1:0] k1_data;
reg [N-1:0]      k1_keep;
reg [LN-1:0]     k1_rsel;
reg [LN-1:0]     k1_fill;
reg [OL-1:0]     k1_n;
reg              k1_run_first, k1_run_last, k1_fpdu_first, k1_fpdu_end;
reg [CONN_W-1:0] k1_conn;
reg [15:0]       k1_ulen;
assign pk_ready = !k1_valid || k1_take;

wire [2*DATA_W-1:0] s_dbl = {s_data, s_data};
wire [LN-1:0] lo = s_ulp_lo[LN-1:0];
wire [OL-1:0] s_n = s_ulp_hi - s_ulp_lo;
wire [DATA_W-1:0] s_down = s_dbl[{1'b0, lo, 3'b000} +: DATA_W];
wire [N-1:0]  s_nkeep;          // lanes below s_n
generate
    for (g = 0; g < N; g = g + 1) begin : nkeep
        localparam [OL-1:0] LANE = g;
        assign s_nkeep[g] = {1'b0, LANE} < {1'b0, s_n};
    end
endgenerate
// The fill position the beat taken in now starts at: 0 for a run's first
// beat, else fill_reg as the pack stage leaves it at this edge (total mod
// N when it takes the beat in k1: full or not, spill and total agree
// there). It and its rotation (-fill mod N) are registers beside the
// beat, so that the pack stage's data is a rotation by a register and one
// LUT.
wire          k1_take;
wire [OL:0]   total;
wire [LN-1:0] fill_nx = k1_take ? total[LN-1:0] : fill_reg;
wire [LN-1:0] rsel_nx = k1_take ? {LN{1'b0}} - total[LN-1:0] : {LN{1'b0}} - fill_reg;

always @(posedge clk) begin
    if (k1_take) begin
        k1_valid <= 1'b0;
    end
    if (take && !s_nopiece) begin
        k1_valid <= 1'b1;
        k1_data <= s_down & mask_lanes(s_nkeep);
        k1_keep <= s_nkeep;
        k1_rsel <= s_run_first ? {LN{1'b0}} : rsel_nx;
        k1_fill <= s_run_first ? {LN{1'b0}} : fill_nx;
        k1_n <= s_n;
        k1_run_first <= s_run_first;
        k1_run_last <= s_run_last;
        k1_fpdu_first <= s_fpdu_first;
        k1_fpdu_end <= s_fpdu_end;
        k1_conn <= s_conn;
        k1_ulen <= s_ulen;
    end
    if (rst) begin
        k1_valid <= 1'b0;
    end
end

// k2: octets appended at the fill position of the frame being built.
reg [DATA_W-1:0] acc_reg;
reg [LN-1:0]     fill_reg;
reg              flush_reg;     // the frame's last beat is still to go

reg [CONN_W-1:0] run_conn_reg;
reg [15:0]       run_ulen_reg;
reg              run_first_reg;
wire [CONN_W-1:0] run_conn = k1_run_first ? k1_conn : run_conn_reg;
wire [15:0]       run_ulen = k1_run_first ? k1_ulen : run_ulen_reg;
wire              run_fpdu_first = k1_run_first ? k1_fpdu_first : run_first_reg;

// The output is a three-beat queue, m_* (its head) then sk0_*, sk1_*: the
// pack stage goes on while sk1_* is empty, so a clock in which mpa_rx's
// merge holds the lane's output (while the other lane's piece goes first)
// costs no input clock as long as the beats behind it can wait, and
// out_free, the lane's s_ready with it, comes from a register rather than
// from m_tready through the merge.
reg sk0_valid, sk1_valid;
wire out_free = !sk1_valid;
wire [LN-1:0] fill = k1_run_first ? {LN{1'b0}} : fill_reg;
// acc_reg holds zeros from fill_reg up, and k1_data from k1_n up, so the
// beat's octets rotated up by fill (y) are zero outside [fill, total) mod
// N: y's lanes below fill are what spills past a full beat (rest), and
// the octets so far are acc | (y at or above fill).
wire [DATA_W-1:0] acc = k1_run_first ? {DATA_W{1'b0}} : acc_reg;
wire [2*DATA_W-1:0] k1_dbl = {k1_data, k1_data};
wire [2*N-1:0] k1_kdbl = {k1_keep, k1_keep};
wire [DATA_W-1:0] y = k1_dbl[{1'b0, k1_rsel, 3'b000} +: DATA_W];   // k1_data rotated up by fill
wire [N-1:0] yk = k1_kdbl[{1'b0, k1_rsel} +: N];
assign total = {2'b00, fill} + {1'b0, k1_n};
wire full = total >= {2'b01, {LN{1'b0}}};
wire [OL:0] spill = total - {2'b01, {LN{1'b0}}};

wire [N-1:0] k1_ge;            // lanes at or above fill (a LUT each, from k1_fill)
generate
    for (g = 0; g < N; g = g + 1) begin : ge
        localparam [LN-1:0] LANE = g;
        if (g == N - 1) begin : top
            assign k1_ge[g] = 1'b1;
        end else begin : below
            assign k1_ge[g] = LANE >= k1_fill;
        end
    end
endgenerate
wire [DATA_W-1:0] ge_d = mask_lanes(k1_ge);
wire [DATA_W-1:0] joined = acc | (y & ge_d);     // acc below fill, y from fill up
wire [DATA_W-1:0] rest = y & ~ge_d;              // y below spill (the part past a full beat)
wire [N-1:0] keep_total = ~k1_ge | yk;           // lanes below total (total < N)

assign k1_take = k1_valid && out_free && !flush_reg;

// The beat the pack stage makes this clock (p_*): the rest of a last beat
// that overflowed (flush: its run's conn .. first are in run_*_reg, its FPDU
// end in fl_end_reg), a full beat, or a run's last beat.
reg               fl_end_reg;
wire              p_flush = flush_reg && out_free;
wire              p_make = p_flush || (k1_take && (full || k1_run_last));
wire [DATA_W-1:0] p_data = p_flush ? acc_reg : joined;
wire [N-1:0]      p_keep = p_flush ? keep_fill(fill_reg) : full ? {N{1'b1}} : keep_total;
wire              p_tlast = p_flush || !full || (k1_run_last && spill == {(OL + 1){1'b0}});
wire [CONN_W-1:0] p_conn = p_flush ? run_conn_reg : run_conn;
wire [15:0]       p_ulen = p_flush ? run_ulen_reg : run_ulen;
wire              p_first = p_flush ? run_first_reg : run_fpdu_first;
wire              p_last = p_flush ? fl_end_reg : k1_fpdu_end;

localparam QW = DATA_W + N + 1 + CONN_W + 16 + 1 + 1;
wire [QW-1:0] p_beat = {p_data, p_keep, p_tlast, p_conn, p_ulen, p_first, p_last};
reg  [QW-1:0] sk0, sk1;
wire          m_take = m_tvalid && m_tready;

always @(posedge clk) begin
    if (p_flush) begin
        flush_reg <= 1'b0;
    end else if (k1_take) begin
        if (full) begin
            acc_reg <= rest;
            fill_reg <= spill[LN-1:0];
            flush_reg <= k1_run_last && spill != {(OL + 1){1'b0}};
            fl_end_reg <= k1_fpdu_end;
        end else begin
            acc_reg <= joined;
            fill_reg <= total[LN-1:0];
        end
        // A frame's conn, ulen and first are those of its run's first beat.
        if (k1_run_first) begin
            run_conn_reg <= k1_conn;
            run_ulen_reg <= k1_ulen;
            run_first_reg <= k1_fpdu_first;
        end
    end

    // The queue: a beat taken from the head moves the others up; a new
    // beat goes into the first slot free after that.
    if (m_take) begin
        m_tvalid <= sk0_valid || p_make;
        if (sk0_valid) begin
            {m_tdata, m_tkeep, m_tlast, m_conn, m_ulen, m_first, m_last} <= sk0;
        end else if (p_make) begin
            {m_tdata, m_tkeep, m_tlast, m_conn, m_ulen, m_first, m_last} <= p_beat;
        end
        sk0_valid <= sk1_valid || (sk0_valid && p_make);
        sk0 <= sk1_valid ? sk1 : p_beat;
        sk1_valid <= 1'b0;
    end else if (p_make) begin
        if (!m_tvalid) begin
            m_tvalid <= 1'b1;
            {m_tdata, m_tkeep, m_tlast, m_conn, m_ulen, m_first, m_last} <= p_beat;
        end else if (!sk0_valid) begin
            sk0_valid <= 1'b1;
            sk0 <= p_beat;
        end else begin
            sk1_valid <= 1'b1;
            sk1 <= p_beat;
        end
    end
    if (rst) begin
        m_tvalid <= 1'b0;
        sk0_valid <= 1'b0;
        sk1_valid <= 1'b0;
        flush_reg <= 1'b0;
        fill_reg <= {LN{1'b0}};
    end
end

// tkeep of a beat holding the lanes below f.
function [N-1:0] keep_fill;
    input [LN-1:0] f;
    integer j;
    begin
        for (j = 0; j < N; j = j + 1) begin
            keep_fill[j] = j < f;
        end
    end
endfunction

// The octets of the lanes whose keep bit is set, zeros elsewhere.
function [DATA_W-1:0] mask_lanes;
    input [N-1:0] lanes;
    integer j;
    begin
        for (j = 0; j < N; j = j + 1) begin
            mask_lanes[8*j +: 8] = {8{lanes[j]}};
        end
    end
endfunction

endmodule

`resetall
