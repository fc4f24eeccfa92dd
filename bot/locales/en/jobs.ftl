# Job status and intake messages (English).
intake-album-accepted = Got an album, job #{ $id }. I’ll collect its files and make one PDF of them, in album order.
# A part of an album that came after the album's files were all downloaded (issue 13 item 5): a job of its own.
intake-album-late = “{ $name }” came after album #{ $album } was already being made, so it is not in that PDF: it is job #{ $id } of its own.
intake-accepted = Got “{ $name }”, job #{ $id }. Queued — I’ll tell you when it’s done.
intake-duplicate = I already have this file: job #{ $id }, status — { $status }.
intake-duplicate-ready = This file was already processed (job #{ $id }). Sending the result again.
intake-too-big = The file is { $size } MB, over this bot’s { $limit } MB download limit. Job #{ $id } will not run.
intake-not-allowed = Sorry, this bot is available to invited users only.
intake-limit-in-flight = You already have { $count } files in progress (limit { $limit }). Send this one when some of them are done.
intake-limit-bytes = In the last 24 hours you sent { $used } MB of the allowed { $limit } MB. Please try later.
intake-unsupported-message = Send a document (a PDF or an image) as a file — I’ll process it and send the result back.
help = I take PDFs and images and send back a result: text and a preview for PDFs, a cleaned copy for images.
  Photos or files sent together as one album become one PDF, in album order.
  Under a PDF result: rotate, extract pages, split, compress, merge with the next files; under an image: to PDF.
  Commands:
  /jobs — your latest jobs
  /status N — status of job N
  /resend N — send the result again
  /cancel N — cancel a job
  /delete N — delete the source and result now
  /settings — what to do with files

state-accepted = accepted, queued
state-fetched = downloaded, waiting
state-processing = processing
state-ready = ready
state-failed = failed
state-expired = expired

status-queued = Job #{ $id }: queued for download{ $position ->
    [0] {""}
   *[other] , position { $position }
  }.
status-downloading-part = Job #{ $id }: downloading file { $part } of { $parts }…
status-downloading = Job #{ $id }: downloading… { $percent } %
status-fetched = Job #{ $id }: file received ({ $size }), waiting for processing{ $position ->
    [0] {""}
   *[other] , position { $position }
  }.
status-processing = Job #{ $id }: processing…
status-processing-pages = Job #{ $id }: processing page { $done }/{ $total }…
status-recognizing-pages = Job #{ $id }: recognizing page { $done }/{ $total }…
status-sending = Job #{ $id }: sending the result…
status-ready = Done, job #{ $id }: { $facts }.
  The result is kept until { $until } (UTC).
status-ready-reused = Done, job #{ $id }: the same file was processed before — sending that result. Kept until { $until } (UTC).
status-failed = Job #{ $id } failed: { $reason }
status-retrying = Job #{ $id }: that didn’t work, trying again (attempt { $attempt } of { $max }).
photo-note = Sent as a photo, so Telegram compressed it; send it as a file to process the original.
mismatch-note = It was sent as “.{ $declared }”, but the content is: { $actual }.

cmd-status-line = #{ $id } · { $name } · { $status }
cmd-status-history = History:
cmd-status-try = { $time } UTC · { $step } · { $outcome }: { $reason }
attempt-step-intake = intake
attempt-step-download = download
attempt-step-processing = processing
attempt-step-delivery = sending the result
attempt-outcome-retry = tried again
attempt-outcome-failed = ended
attempt-outcome-interrupted = interrupted
attempt-outcome-rearmed = sent again
attempt-reason-interrupted = the bot restarted during this step
attempt-reason-expired = the result had expired
attempt-retry-download_failed = the download failed
attempt-retry-file_unavailable = Telegram could not give the file then
attempt-retry-processing_crashed = processing stopped unexpectedly
attempt-retry-processing_timeout = processing took too long
attempt-retry-delivery_failed = Telegram did not take the result then
cmd-jobs-empty = No jobs yet.
cmd-jobs-title = Your latest jobs:
cmd-unknown = I don’t know that command. /help lists what I can do.
cmd-not-found = Job #{ $id } was not found in this chat.
cmd-not-yours = Job #{ $id } belongs to another member of this chat; only they, an admin of this group or the bot’s admin can do that.
cmd-usage = Give a job number, e.g. /{ $cmd } 12
cmd-resend-not-ready = Job #{ $id } is “{ $status }”, there is nothing to send.
cmd-deleted = Job #{ $id }: source and result deleted.
cmd-cancelled = Job #{ $id } cancelled.
cmd-cancel-final = Job #{ $id } has already ended ({ $status }); nothing to cancel.
result-caption = Job #{ $id }: { $name }

summary-pdf = PDF, { $pages ->
    [one] { $pages } page
   *[other] { $pages } pages
  }{ $chars ->
    [0] , no text layer
   *[other] , { $chars } characters of text
  }
summary-image = { $label } { $width }×{ $height }{ $frames ->
    [1] {""}
   *[other] , { $frames } frames
  }
summary-album = one PDF of { $pages ->
    [one] { $pages } page
   *[other] { $pages } pages
  } from { $parts ->
    [one] { $parts } file
   *[other] { $parts } files
  }
# A part of an album that is not in the PDF (issue 13 item 5): its position, its name when it had one, and why.
summary-part-failed = file { $part }{ $name ->
    [none] {""}
   *[other] {" "}“{ $name }”
  } was left out: { $reason }
summary-other = { $label }
# Appended to a summary when part of the file was left out (audit of issue 5, gap 8).
summary-first-page-only = only page 1 of { $frames } converted
summary-first-frame-only = only frame 1 of { $frames } converted (the frame limit is { $limit })
summary-no-preview = no preview: page 1 took too long to draw
summary-images-not-decoded = page images could not be decoded ({ $count ->
    [one] page
   *[other] pages
  } { $pages })
# Text recognition of scanned pages (issue 13).
summary-ocr-recognized = { $count ->
    [one] { $count } page recognized
   *[other] { $count } pages recognized
  } ({ $chars } characters)
summary-ocr-none = no page could be recognized
summary-ocr-stopped-page_limit = recognition stopped at page { $page }: at most { $limit ->
    [one] { $limit } page is
   *[other] { $limit } pages are
  } recognized per file
summary-ocr-stopped-time_limit = recognition stopped at page { $page }: the { $limit } s allowed for recognizing one file ran out
summary-ocr-stopped-render_budget = recognition stopped at page { $page }: it took longer than { $limit } s to draw
summary-ocr-over-budget = not recognized, took longer than { $seconds } s: { $count ->
    [one] page
   *[other] pages
  } { $pages }
summary-ocr-failed = recognition failed on { $count ->
    [one] page
   *[other] pages
  } { $pages }
summary-ocr-unavailable = text recognition is not available on this server right now
summary-searchable-not-needed = no searchable PDF: every page already has a text layer
summary-searchable-failed = no searchable PDF: it could not be made from this file (the text is in the .txt)

settings-title = What should I do with PDFs in this chat? A change applies to new files; the same file sent again after a change is processed anew.
settings-admins-only = In a group, only its admins can change /settings.
settings-pdf-default = Text (scanned pages recognized) and a page-1 preview
settings-pdf-pages = Every page as an image (ZIP)
settings-pdf-searchable = Searchable PDF: the scan with a text layer you can search and copy
settings-saved = Saved

size-kb = { $n } KB
size-mb = { $n } MB

# Actions on a result (issue 15): buttons of the final message, questions and their answers.
action-btn-rotate = ↻ Rotate
action-btn-extract = Extract pages
action-btn-split = ✂ Split
action-btn-compress = Compress
action-btn-searchable = Searchable PDF
action-btn-topdf = To PDF
action-btn-some-pages = Some pages…
action-btn-back = « Back
action-btn-compress-ebook = Smaller (150 dpi)
action-btn-compress-strong = Smallest (96 dpi)
action-name-rotate = rotating
action-name-extract = extracting pages
action-name-split = splitting
action-name-compress = compressing
action-name-topdf = making a PDF
action-name-searchable = making a searchable PDF
action-accepted = Job #{ $id }: { $action } the file of job #{ $source }. Queued — I’ll tell you when it’s done.
action-not-yours = Only the member who sent the file of job #{ $id }, an admin of this group or the bot’s admin can use its buttons.
action-expired = The result of job #{ $id } has expired, so its buttons no longer work. Send the file again to use them.
action-ask-extract = Job #{ $id } has { $pages } { $pages ->
    [one] page
   *[other] pages
  }. Which pages should I extract? Reply with a list, e.g. 1-3,7,10-
action-ask-split = Job #{ $id } has { $pages } { $pages ->
    [one] page
   *[other] pages
  }. How should I split it? Reply with the parts, e.g. 1-3,4-6,7- (one range, e.g. 1-{ $pages }, makes one file per page).
action-ask-rotate = Job #{ $id } has { $pages } { $pages ->
    [one] page
   *[other] pages
  }. Which pages, and by how much clockwise? Reply e.g. 1-3 90 (90, 180 or 270).
action-range-past-end = “{ $item }” is past the end: the file has { $pages } { $pages ->
    [one] page
   *[other] pages
  }. Reply with pages from 1 to { $pages }.
action-range-backwards = “{ $item }” runs backwards; write the smaller page first, e.g. 2-5.
action-range-too-many = That is more than { $limit } ranges; please give fewer.
action-range-syntax = I can’t read “{ $item }” as pages. Write them like 1-3,7,10- (pages 1 to { $pages }).
action-angle = I can turn pages by 90°, 180° or 270° only, not { $angle }°.
action-split-single = That makes only one part; give at least two ranges, or one range of several pages.
summary-rotated = { $count ->
    [one] { $count } page
   *[other] { $count } pages
  } of { $pages } turned by { $degrees }°
summary-extracted = { $count ->
    [one] { $count } page
   *[other] { $count } pages
  } of { $pages } extracted
summary-split = { $pages } pages split into { $count } files
summary-compressed = compressed from { $before } to { $after } ({ $percent } % smaller)
summary-not-smaller = compressing would not make it smaller than { $before }, so here is the original
action-btn-merge = Merge with next files
action-ask-merge = Send the PDFs or images to add after the file of job #{ $id } (as files, in the order you want them). I’ll merge them { $seconds } s after the last one.
action-merge-accepted = Job #{ $id }: merging the file of job #{ $source } with the files you send; I’ll start { $seconds } s after the last one.
action-merge-one = A merge needs at least one more file after job #{ $id }’s; nothing was made. Press “Merge with next files” again and send the files.
