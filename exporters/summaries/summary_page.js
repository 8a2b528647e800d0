// Script of the `profagent report --format html` page (embedded into the page at build time).
// Reads the `--format json` document from the page's report-data block and draws, per trace,
// SVG charts (step trace, overview, operator types, top kernels, memory timeline) and one table
// per summary. No library and nothing fetched: the page must open offline.
//
// Hooks for tests: every chart is <svg data-chart="NAME">, every bar in it carries data-bar
// (a stacked step is one <g data-bar> of <rect data-segment>), every line is a
// <polyline data-series>; a chart without data is <p data-empty="NAME"> instead. Every table is
// <table data-summary="NAME"> whose data rows are <tr data-row>. Each trace is
// <section data-trace="INDEX">. When drawing is done <body data-rendered="true"> is set.
'use strict';

(function () {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NS_PER_UNIT = { s: 1e9, ms: 1e6, us: 1e3, ns: 1 };
  const TOP_KERNELS = 15;
  const MAX_INDENT = 16;
  const CHART_WIDTH = 760;

  const TITLES = {
    device: 'Device Summary', overview: 'Overview Summary', model: 'Model Summary',
    distributed: 'Distributed Summary', operator: 'Operator Summary', kernel: 'Kernel Summary',
    memory_manipulation: 'Memory Manipulation Summary', user_defined: 'UserDefined Summary',
    perf: 'Perf Summary', step_trace: 'Step Trace', op_type: 'Operator Type Statistics',
    key_averages: 'key_averages', memory: 'Memory Summary',
  };

  // ---- elements -------------------------------------------------------------------------

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) node.setAttribute(key, String(value));
    }
  }

  function append(node, children) {
    for (const child of [].concat(children === undefined ? [] : children)) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
  }

  // ---- numbers --------------------------------------------------------------------------

  function makeFormat(unit) {
    const scale = NS_PER_UNIT[unit];
    return {
      unit: unit,
      time: (ns) => (ns === null || ns === undefined ? '-' : (ns / scale).toFixed(2)),
      ratio: (r) => (r === null || r === undefined ? '-' : r.toFixed(2)),
      count: (n) => (n === null || n === undefined ? '-' : String(n)),
      seconds: (s) => (s === null || s === undefined ? '-' : s.toFixed(6)),
      bytes: formatBytes,
    };
  }

  function formatBytes(b) {
    if (b === null || b === undefined) return '-';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = b;
    let i = 0;
    while (Math.abs(value) >= 1024 && i < units.length - 1) { value /= 1024; i++; }
    return (i === 0 ? String(value) : value.toFixed(2)) + ' ' + units[i];
  }

  // ---- charts ---------------------------------------------------------------------------

  function emptyNote(name, text) {
    return el('p', { class: 'empty', 'data-empty': name }, text);
  }

  function chartBox(title, svgNode) {
    return el('figure', { class: 'chart' }, [el('figcaption', {}, title), svgNode]);
  }

  // Not Math.max(...values): a long memory timeline would exceed the engine's argument limit.
  function maxOf(values) {
    return values.reduce((max, v) => (v > max ? v : max), 0);
  }

  function shortLabel(text, max) {
    return text.length <= max ? text : text.slice(0, max - 1) + '\u2026';
  }

  // Horizontal bars: items are {label, value, text, cls}; `value` sets the length.
  function horizontalBars(name, items) {
    const labelWidth = 250, valueWidth = 150, row = 20;
    const barSpace = CHART_WIDTH - labelWidth - valueWidth;
    const max = maxOf(items.map((it) => it.value)) || 1;
    const height = items.length * row + 8;
    const root = svg('svg', { 'data-chart': name, width: CHART_WIDTH, height: height,
                              viewBox: `0 0 ${CHART_WIDTH} ${height}`, role: 'img' });
    items.forEach((it, i) => {
      const y = 4 + i * row;
      const width = Math.max(0, (it.value / max) * barSpace);
      root.appendChild(svg('text', { x: labelWidth - 6, y: y + 14, 'text-anchor': 'end' },
                           shortLabel(it.label, 38)));
      root.appendChild(svg('rect', { 'data-bar': it.label, 'data-value': it.value, class: it.cls,
                                     x: labelWidth, y: y + 3, width: width, height: row - 6 },
                           svg('title', {}, `${it.label}: ${it.text}`)));
      root.appendChild(svg('text', { class: 'value', x: labelWidth + width + 4, y: y + 14 }, it.text));
    });
    return root;
  }

  const STEP_SEGMENTS = [
    { key: 'iteration_gap_ns', series: 'gap', label: 'Iteration Gap' },
    { key: 'fp_bp_ns', series: 'fp_bp', label: 'FP+BP' },
    { key: 'tail_ns', series: 'tail', label: 'Iteration Tail' },
  ];

  function stepTraceChart(summary, fmt) {
    const steps = summary.steps || [];
    if (steps.length === 0) return emptyNote('step_trace', 'no steps in this trace');
    const left = 70, bottom = 40, top = 26, plot = 220;
    const slot = Math.max(6, Math.min(48, (CHART_WIDTH - left - 10) / steps.length));
    const width = Math.max(CHART_WIDTH, left + slot * steps.length + 10);
    const total = (s) => STEP_SEGMENTS.reduce((sum, seg) => sum + (s[seg.key] || 0), 0);
    const max = maxOf(steps.map(total)) || 1;
    const root = svg('svg', { 'data-chart': 'step_trace', width: width, height: top + plot + bottom,
                              viewBox: `0 0 ${width} ${top + plot + bottom}`, role: 'img' });
    root.appendChild(legend(STEP_SEGMENTS.map((seg) => [seg.label, 'series-' + seg.series]), left));
    root.appendChild(svg('line', { class: 'axis', x1: left, x2: width - 10, y1: top + plot, y2: top + plot }));
    root.appendChild(svg('text', { x: left - 6, y: top + 10, 'text-anchor': 'end' }, `${fmt.time(max)} ${fmt.unit}`));
    steps.forEach((step, i) => {
      const x = left + i * slot + slot * 0.15;
      root.appendChild(stepBar(step, x, slot * 0.7, top + plot, plot / max, fmt));
      if (steps.length <= 40 || i % Math.ceil(steps.length / 40) === 0) {
        root.appendChild(svg('text', { x: x + slot * 0.35, y: top + plot + 14, 'text-anchor': 'middle' },
                             String(step.step)));
      }
    });
    root.appendChild(svg('text', { x: left, y: top + plot + 32 }, 'step'));
    return root;
  }

  function stepBar(step, x, width, baseline, scale, fmt) {
    const parts = STEP_SEGMENTS.map((seg) => `${seg.label} ${fmt.time(step[seg.key])} ${fmt.unit}`);
    const missing = step.fp && step.bp ? '' : ' (no FP or BP point)';
    const group = svg('g', { 'data-bar': `step ${step.step}`, 'data-step': step.step },
                      svg('title', {}, `step ${step.step}${missing}: ${parts.join(', ')}`));
    let y = baseline;
    for (const seg of STEP_SEGMENTS) {
      const h = (step[seg.key] || 0) * scale;
      y -= h;
      group.appendChild(svg('rect', { 'data-segment': seg.series, class: 'series-' + seg.series,
                                      x: x, y: y, width: width, height: h },
                            svg('title', {}, `step ${step.step} ${seg.label}: ${fmt.time(step[seg.key])} ${fmt.unit}`)));
    }
    return group;
  }

  function legend(entries, x) {
    const g = svg('g', { class: 'legend' });
    let offset = x;
    for (const [label, cls] of entries) {
      g.appendChild(svg('rect', { class: cls, x: offset, y: 6, width: 10, height: 10 }));
      g.appendChild(svg('text', { x: offset + 14, y: 15 }, label));
      offset += 24 + label.length * 7;
    }
    return g;
  }

  function overviewChart(summary, fmt) {
    const rows = (side, cls) => (summary[side] || []).map((r) => ({
      label: `${side.toUpperCase()} ${r.type}`, value: r.time_ns || 0, cls: cls,
      text: `${fmt.time(r.time_ns)} ${fmt.unit} (${fmt.ratio(r.ratio)}%)`,
    }));
    const items = rows('cpu', 'bar-cpu').concat(rows('gpu', 'bar-gpu'));
    if (items.length === 0) return emptyNote('overview', 'no overview rows in this trace');
    return horizontalBars('overview', items);
  }

  function opTypeChart(summary, fmt) {
    const rows = summary.rows || [];
    if (rows.length === 0) return emptyNote('op_type', 'no operators in this trace');
    const key = summary.metric === 'cpu' ? 'cpu_ns' : 'device_ns';
    return horizontalBars('op_type', rows.map((r) => ({
      label: r.type, value: r[key] || 0, cls: 'bar-op',
      text: `${fmt.time(r[key])} ${fmt.unit} (${fmt.ratio(r.ratio)}%)`,
    })));
  }

  function topKernels(summary) {
    const gpuTotal = (r) => (r.gpu ? r.gpu.total_ns : 0);
    return (summary.rows || []).filter((r) => (r.depth || 0) === 0)
      .slice().sort((a, b) => gpuTotal(b) - gpuTotal(a)).slice(0, TOP_KERNELS);
  }

  function kernelChart(summary, fmt) {
    const rows = topKernels(summary);
    if (rows.length === 0) return emptyNote('kernel', 'no kernels in this trace');
    return horizontalBars('kernel', rows.map((r) => ({
      label: r.name, value: r.gpu ? r.gpu.total_ns : 0, cls: 'bar-kernel',
      text: `${fmt.time(r.gpu && r.gpu.total_ns)} ${fmt.unit} (${r.calls} calls)`,
    })));
  }

  function memoryCharts(summary, fmt) {
    const devices = (summary.devices || []).filter((d) => (d.timeline || []).length > 0);
    if (devices.length === 0) return [emptyNote('memory', 'no memory records in this trace')];
    return devices.map((d) => chartBox(`Memory of device ${d.device}`, memoryChart(d, fmt)));
  }

  function memoryChart(device, fmt) {
    const points = device.timeline;
    const left = 80, top = 26, plot = 200, height = top + plot + 30, right = CHART_WIDTH - 10;
    const t0 = points[0][0], t1 = points[points.length - 1][0];
    const span = t1 - t0 || 1;
    const max = maxOf(points.map((p) => Math.max(p[1], p[2]))) || 1;
    const x = (t) => left + ((t - t0) / span) * (right - left);
    const y = (bytes) => top + plot - (bytes / max) * plot;
    const line = (col) => points.map((p) => `${x(p[0]).toFixed(1)},${y(p[col]).toFixed(1)}`).join(' ');
    const root = svg('svg', { 'data-chart': 'memory', 'data-device': device.device, width: CHART_WIDTH,
                              height: height, viewBox: `0 0 ${CHART_WIDTH} ${height}`, role: 'img' });
    root.appendChild(legend([['allocated', 'key-allocated'], ['reserved', 'key-reserved']], left));
    root.appendChild(svg('line', { class: 'axis', x1: left, x2: right, y1: top + plot, y2: top + plot }));
    root.appendChild(svg('text', { x: left - 6, y: top + 10, 'text-anchor': 'end' }, fmt.bytes(max)));
    root.appendChild(svg('text', { x: right, y: top + plot + 16, 'text-anchor': 'end' },
                         `${fmt.time(t1 - t0)} ${fmt.unit}`));
    root.appendChild(svg('polyline', { 'data-series': 'reserved', class: 'line-reserved', points: line(2) },
                         svg('title', {}, `reserved, peak ${fmt.bytes(device.peak_reserved)}`)));
    root.appendChild(svg('polyline', { 'data-series': 'allocated', class: 'line-allocated', points: line(1) },
                         svg('title', {}, `allocated, peak ${fmt.bytes(device.peak_allocated)}`)));
    return root;
  }

  function charts(summaries, fmt) {
    const box = el('div', { class: 'charts' });
    const add = (title, node) => box.appendChild(chartBox(title, node));
    if (summaries.step_trace) add('Step trace (per step)', stepTraceChart(summaries.step_trace, fmt));
    if (summaries.overview) add('Overview (time by type)', overviewChart(summaries.overview, fmt));
    if (summaries.op_type) add('Operator types', opTypeChart(summaries.op_type, fmt));
    if (summaries.kernel) add(`Top kernels by GPU time`, kernelChart(summaries.kernel, fmt));
    if (summaries.memory) append(box, memoryCharts(summaries.memory, fmt));
    return box;
  }

  // ---- tables ---------------------------------------------------------------------------

  // columns: [{head, cell(row) -> text, num: bool}]
  function table(name, caption, columns, rows, attrs) {
    const head = el('tr', {}, columns.map((c) => el('th', { class: c.num ? 'num' : null }, c.head)));
    const body = el('tbody', {}, rows.map((r) => (r.group !== undefined
      ? el('tr', { class: 'group' }, el('th', { colspan: columns.length }, r.group))
      : el('tr', { 'data-row': '' }, columns.map((c) => cell(c, r))))));
    return el('table', Object.assign({ 'data-summary': name }, attrs || {}),
              [el('caption', {}, caption), el('thead', {}, head), body]);
  }

  function cell(column, row) {
    const text = column.cell(row);
    // Indentation stops at MAX_INDENT levels (a trace may nest operators 20,000 deep).
    const depth = Math.min(row.depth || 0, MAX_INDENT);
    const style = column.indent && depth ? `padding-left: ${0.6 + depth * 1.2}rem` : null;
    return el('td', { class: column.num ? 'num' : 'name', style: style, title: column.num ? null : text }, text);
  }

  function statColumns(side, fmt) {
    const get = (r, key) => (r[side] ? r[side][key] : null);
    const u = fmt.unit;
    return [
      { head: `${side.toUpperCase()} Total(${u})`, num: true, cell: (r) => fmt.time(get(r, 'total_ns')) },
      { head: 'Avg', num: true, cell: (r) => fmt.time(get(r, 'avg_ns')) },
      { head: 'Max', num: true, cell: (r) => fmt.time(get(r, 'max_ns')) },
      { head: 'Min', num: true, cell: (r) => fmt.time(get(r, 'min_ns')) },
      { head: 'Ratio(%)', num: true, cell: (r) => fmt.ratio(get(r, 'ratio')) },
    ];
  }

  function rowColumns(fmt) {
    return [{ head: 'Name', indent: true, cell: (r) => r.name },
            { head: 'Calls', num: true, cell: (r) => fmt.count(r.calls) }]
      .concat(statColumns('cpu', fmt), statColumns('gpu', fmt));
  }

  const shareColumns = (fmt, nameKey) => [
    { head: 'Name', cell: (r) => r[nameKey] },
    { head: 'Calls', num: true, cell: (r) => fmt.count(r.calls) },
    { head: `Time(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.time_ns) },
    { head: 'Ratio(%)', num: true, cell: (r) => fmt.ratio(r.ratio) },
  ];

  const TABLES = {
    device: (s, fmt) => [table('device', `Device Summary (elapsed ${fmt.time(s.elapsed_ns)} ${fmt.unit})`, [
      { head: 'Device', cell: (r) => r.name },
      { head: 'Utilization(%)', num: true, cell: (r) => (r.utilization === null ? 'n/a' : fmt.ratio(r.utilization)) },
    ], s.rows || [])],
    overview: (s, fmt) => [table('overview', 'Overview Summary', shareColumns(fmt, 'type'),
      [{ group: 'CPU' }].concat(s.cpu || [], [{ group: 'GPU' }], s.gpu || []))],
    model: (s, fmt) => [table('model', 'Model Summary', rowColumns(fmt), s.rows || [])],
    distributed: (s, fmt) => [table('distributed', 'Distributed Summary', [
      { head: 'Name', cell: (r) => r.name },
      { head: `Total Time(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.time_ns) },
      { head: 'Ratio(%)', num: true, cell: (r) => fmt.ratio(r.ratio) },
    ], s.rows || [])],
    operator: (s, fmt) => threadTables('operator', 'Operator Summary', s, fmt),
    user_defined: (s, fmt) => threadTables('user_defined', 'UserDefined Summary', s, fmt),
    kernel: (s, fmt) => [table('kernel', 'Kernel Summary' + cutNote(s), rowColumns(fmt), s.rows || [])],
    memory_manipulation: (s, fmt) => [table('memory_manipulation', 'Memory Manipulation Summary' + cutNote(s),
                                            rowColumns(fmt), s.rows || [])],
    perf: perfTables,
    step_trace: stepTraceTable,
    op_type: (s, fmt) => [table('op_type', `Operator Type Statistics (ratio of ${s.metric} time)`, [
      { head: 'Type', cell: (r) => r.type },
      { head: 'Calls', num: true, cell: (r) => fmt.count(r.count) },
      { head: `Device Self(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.device_ns) },
      { head: `CPU Self(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.cpu_ns) },
      { head: 'Ratio(%)', num: true, cell: (r) => fmt.ratio(r.ratio) },
    ], s.rows || [])],
    key_averages: keyAveragesTable,
    memory: (s, fmt) => [table('memory', 'Memory Summary', [
      { head: 'Device', cell: (r) => String(r.device) },
      { head: 'Peak allocated', num: true, cell: (r) => fmt.bytes(r.peak_allocated) },
      { head: 'Peak reserved', num: true, cell: (r) => fmt.bytes(r.peak_reserved) },
      { head: 'Timeline points', num: true, cell: (r) => fmt.count((r.timeline || []).length) },
    ], s.devices || [])],
  };

  // A table cut by --row-limit says so ("rows_total": the top-level rows before the cut).
  function cutNote(part) {
    const shown = (part.rows || []).filter((r) => (r.depth || 0) === 0).length;
    return part.rows_total > shown ? ` (${shown} of ${part.rows_total} rows; --row-limit 0 shows all)` : '';
  }

  function threadTables(name, title, summary, fmt) {
    const threads = summary.threads || [];
    if (threads.length === 0) return [table(name, title, rowColumns(fmt), [])];
    return threads.map((t) => table(name, `${title} \u2014 ${t.thread}${cutNote(t)}`, rowColumns(fmt), t.rows || [],
                                    { 'data-thread': t.thread }));
  }

  function perfTables(s, fmt) {
    const stat = (label, obj, show) => Object.assign({ label: label }, ...['avg', 'max', 'min'].map(
      (k) => ({ [k]: obj ? show(obj[k + '_s'] !== undefined ? obj[k + '_s'] : obj[k]) : '-' })));
    const seconds = (v) => fmt.seconds(v);
    const stats = [stat('batch_cost (s)', s.batch_cost, seconds), stat('reader_cost (s)', s.reader_cost, seconds),
                   stat('ips (steps/s)', s.ips, (v) => (v === null || v === undefined ? '-' : v.toFixed(2)))];
    const summaryTable = table('perf', `Perf Summary (Reader Ratio ${fmt.ratio(s.reader_ratio)}%)`, [
      { head: 'Metric', cell: (r) => r.label },
      { head: 'Avg', num: true, cell: (r) => r.avg },
      { head: 'Max', num: true, cell: (r) => r.max },
      { head: 'Min', num: true, cell: (r) => r.min },
    ], stats, { 'data-part': 'stats' });
    const stepsTable = table('perf', 'Perf Summary per step', [
      { head: 'Step', cell: (r) => String(r.step) },
      { head: `batch_cost(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.batch_cost_ns) },
      { head: `reader_cost(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.reader_cost_ns) },
    ], s.steps || [], { 'data-part': 'steps' });
    return [summaryTable, stepsTable];
  }

  function stepTraceTable(s, fmt) {
    const rows = (s.steps || []).map((r) => Object.assign({ label: String(r.step) }, r));
    if (rows.length > 0 && s.average) rows.push(Object.assign({ label: 'Average', fp: '', bp: '' }, s.average));
    const rule = `FP point: ${s.fp_point || 'first Forward operator'}; BP point: ${s.bp_point || 'last Backward operator'}`;
    return [table('step_trace', `Step Trace (${rule})`, [
      { head: 'Step', cell: (r) => r.label },
      { head: 'FP point', cell: (r) => (r.label === 'Average' ? '' : r.fp || '(none)') },
      { head: 'BP point', cell: (r) => (r.label === 'Average' ? '' : r.bp || '(none)') },
      { head: `Iteration Gap(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.iteration_gap_ns) },
      { head: `FP+BP(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.fp_bp_ns) },
      { head: `Iteration Tail(${fmt.unit})`, num: true, cell: (r) => fmt.time(r.tail_ns) },
    ], rows)];
  }

  const KEY_AVERAGE_FIXED = ['name', 'kind', 'input_shapes', 'count', 'self_cpu_ns', 'cpu_total_ns', 'self_cuda_ns',
    'cuda_total_ns'];

  function keyAveragesTable(s, fmt) {
    const rows = s.rows || [];
    // Memory columns are present only when memory was profiled: show whatever extra numbers exist.
    const extra = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !KEY_AVERAGE_FIXED.includes(k));
    const time = (key, head) => ({ head: `${head}(${fmt.unit})`, num: true, cell: (r) => fmt.time(r[key]) });
    const columns = [
      { head: 'Name', cell: (r) => r.name }, { head: 'Kind', cell: (r) => r.kind || '' },
      { head: 'Calls', num: true, cell: (r) => fmt.count(r.count) },
      time('self_cpu_ns', 'Self CPU'), time('cpu_total_ns', 'CPU total'),
      time('self_cuda_ns', 'Self CUDA'), time('cuda_total_ns', 'CUDA total'),
    ].concat(extra.map((k) => ({ head: k, num: true, cell: (r) => (typeof r[k] === 'number' ? fmt.bytes(r[k]) : String(r[k] ?? '-')) })));
    return [table('key_averages', `key_averages (sort by ${s.sort_by || '-'})${cutNote(s)}`, columns, rows)];
  }

  function summaryTables(summaries, fmt) {
    const box = el('div', { class: 'tables' });
    for (const [name, summary] of Object.entries(summaries)) {
      box.appendChild(el('h3', { id: null }, TITLES[name] || name));
      const render = TABLES[name];
      // A summary this page does not know yet is still shown, as its raw data.
      append(box, render ? render(summary, fmt) : el('pre', { 'data-summary': name }, JSON.stringify(summary, null, 2)));
    }
    return box;
  }

  // ---- one trace --------------------------------------------------------------------------

  function traceHeading(trace, index) {
    const where = [trace.source, trace.rank !== undefined && trace.rank !== null ? `rank ${trace.rank}` : null,
                   trace.window !== undefined && trace.window !== null ? `window ${trace.window}` : null]
      .filter(Boolean).join(', ');
    return el('h2', {}, `Trace ${index + 1}: ${trace.path || '(unnamed)'}${where ? ` (${where})` : ''}`);
  }

  function traceNotes(trace, fmt) {
    const notes = [`Times in ${fmt.unit}`];
    const span = trace.span || {};
    notes.push(`${span.kind === 'ProfileStep' ? 'Steps' : 'Whole window'}: CPU ${fmt.time(span.cpu_ns)} ${fmt.unit}, ` +
               `GPU ${fmt.time(span.gpu_ns)} ${fmt.unit}`);
    const outside = trace.outside_steps || {};
    if (outside.host || outside.device) {
      notes.push(`Left out (in no step): ${outside.host || 0} host and ${outside.device || 0} device records`);
    }
    const phases = Object.entries(trace.phases || {}).map(([phase, how]) => `${phase}: ${how}`);
    if (phases.length) notes.push(`Phases: ${phases.join('; ')}`);
    const skipped = Object.entries(trace.skipped || {}).map(([kind, n]) => `${n} ${kind}`);
    if (skipped.length) notes.push(`Not used: ${skipped.join(', ')}`);
    return notes.map((text) => el('p', { class: 'meta' }, text));
  }

  function traceSection(trace, index, fmt) {
    const summaries = trace.summaries || {};
    return el('section', { 'data-trace': index, id: `trace-${index}` }, [
      traceHeading(trace, index), ...traceNotes(trace, fmt),
      charts(summaries, fmt), summaryTables(summaries, fmt),
    ]);
  }

  function traceSelector(traces) {
    const options = [el('option', { value: 'all' }, 'All traces')].concat(traces.map(
      (t, i) => el('option', { value: String(i) }, `${i + 1}: ${t.path || '(unnamed)'}`)));
    const select = el('select', { id: 'trace-select', 'aria-label': 'trace' }, options);
    select.addEventListener('change', () => {
      for (const section of document.querySelectorAll('section[data-trace]')) {
        section.hidden = select.value !== 'all' && section.dataset.trace !== select.value;
      }
    });
    return el('label', {}, ['Show ', select]);
  }

  // ---- page -------------------------------------------------------------------------------

  function render() {
    const root = document.getElementById('report');
    const data = JSON.parse(document.getElementById('report-data').textContent);
    const traces = data.traces || [];
    // Each trace carries the --time-unit its numbers are shown in (ms when it does not say).
    const fmtOf = (trace) => makeFormat(NS_PER_UNIT[trace.time_unit] ? trace.time_unit : 'ms');
    root.appendChild(el('h1', {}, 'profagent report'));
    root.appendChild(el('p', { class: 'meta' }, `${traces.length} trace${traces.length === 1 ? '' : 's'}`));
    if (traces.length > 1) root.appendChild(traceSelector(traces));
    if (traces.length === 0) root.appendChild(el('p', { class: 'empty', 'data-empty': 'traces' }, 'no traces in this report'));
    traces.forEach((trace, i) => root.appendChild(traceSection(trace, i, fmtOf(trace))));
  }

  try {
    render();
    document.body.dataset.rendered = 'true';
  } catch (err) {
    document.getElementById('report').appendChild(el('p', { class: 'error' }, `This report could not be drawn: ${err}`));
    document.body.dataset.rendered = 'error';
    throw err;
  }
})();
