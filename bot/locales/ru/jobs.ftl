# Job status and intake messages (Russian, default).
intake-album-accepted = Принял альбом, задача № { $id }. Соберу все его файлы в один PDF в порядке альбома.
# Часть альбома, пришедшая после того, как все файлы альбома уже скачаны (issue 13 item 5): отдельная задача.
intake-album-late = «{ $name }» пришёл, когда альбом (задача № { $album }) уже собирался, поэтому в его PDF не попал: это отдельная задача № { $id }.
intake-accepted = Принял файл «{ $name }», задача № { $id }. Поставил в очередь — сообщу, когда будет готово.
intake-duplicate = Этот файл уже есть: задача № { $id }, статус — { $status }.
intake-duplicate-ready = Этот файл уже обработан (задача № { $id }). Присылаю результат ещё раз.
intake-too-big = Файл { $size } МБ больше лимита скачивания этого бота ({ $limit } МБ). Задача № { $id } не будет выполнена.
intake-not-allowed = Извините, этот бот доступен только приглашённым пользователям.
intake-limit-in-flight = У вас уже { $count } файлов в работе (предел { $limit }). Пришлите этот файл, когда какие-то из них будут готовы.
intake-limit-bytes = За последние сутки вы прислали { $used } МБ из { $limit } МБ разрешённых. Попробуйте позже.
intake-unsupported-message = Пришлите документ (PDF или изображение) как файл — я обработаю его и пришлю результат.
help = Я принимаю PDF и изображения и присылаю результат: текст и превью для PDF, очищенную копию для изображений.
  Фото или файлы, отправленные одним альбомом, я соберу в один PDF в порядке альбома.
  Под результатом PDF: повернуть, извлечь страницы, разделить, сжать, объединить со следующими файлами; под изображением: в PDF.
  Команды:
  /jobs — ваши последние задачи
  /status N — статус задачи N
  /resend N — прислать результат ещё раз
  /cancel N — отменить задачу
  /delete N — удалить исходник и результат сейчас
  /settings — что делать с файлами

state-accepted = в очереди
state-fetched = скачано, ждёт обработки
state-processing = обрабатывается
state-ready = готово
state-failed = ошибка
state-expired = срок хранения истёк

status-queued = Задача № { $id }: в очереди на скачивание{ $position ->
    [0] {""}
   *[other] , место { $position }
  }.
status-downloading-part = Задача № { $id }: скачиваю файл { $part } из { $parts }…
status-downloading = Задача № { $id }: скачиваю… { $percent } %
status-fetched = Задача № { $id }: файл получен ({ $size }), жду очереди на обработку{ $position ->
    [0] {""}
   *[other] , место { $position }
  }.
status-processing = Задача № { $id }: обрабатываю…
status-processing-pages = Задача № { $id }: обрабатываю страницу { $done } из { $total }…
status-recognizing-pages = Задача № { $id }: распознаю страницу { $done } из { $total }…
status-sending = Задача № { $id }: отправляю результат…
status-ready = Готово, задача № { $id }: { $facts }.
  Результат доступен до { $until } (UTC).
status-ready-reused = Готово, задача № { $id }: такой же файл уже обрабатывался — присылаю готовый результат. Доступен до { $until } (UTC).
status-failed = Задача № { $id } не выполнена: { $reason }
status-retrying = Задача № { $id }: не получилось, пробую ещё раз (попытка { $attempt } из { $max }).
photo-note = Отправлено как фото, поэтому Telegram его сжал; пришлите как файл, чтобы обработать оригинал.
mismatch-note = Файл прислан как «.{ $declared }», но по содержимому это { $actual }.

cmd-status-line = № { $id } · { $name } · { $status }
cmd-status-history = История:
cmd-status-try = { $time } UTC · { $step } · { $outcome }: { $reason }
attempt-step-intake = приём
attempt-step-download = скачивание
attempt-step-processing = обработка
attempt-step-delivery = отправка результата
attempt-outcome-retry = повтор
attempt-outcome-failed = завершено
attempt-outcome-interrupted = прервано
attempt-outcome-rearmed = файл прислан снова
attempt-reason-interrupted = бот перезапустился во время этого шага
attempt-reason-expired = срок хранения результата истёк
attempt-retry-download_failed = скачивание не удалось
attempt-retry-file_unavailable = Telegram тогда не отдал файл
attempt-retry-processing_crashed = обработка неожиданно прервалась
attempt-retry-processing_timeout = обработка шла слишком долго
attempt-retry-delivery_failed = Telegram тогда не принял результат
cmd-jobs-empty = Задач пока нет.
cmd-jobs-title = Ваши последние задачи:
cmd-unknown = Такой команды нет. /help — что я умею.
cmd-not-found = Задача № { $id } не найдена в этом чате.
cmd-not-yours = Задача № { $id } принадлежит другому участнику чата; это может сделать только он, администратор группы или администратор бота.
cmd-usage = Укажите номер задачи, например: /{ $cmd } 12
cmd-resend-not-ready = Задача № { $id } сейчас в статусе «{ $status }», прислать нечего.
cmd-deleted = Задача № { $id }: исходник и результат удалены.
cmd-cancelled = Задача № { $id } отменена.
cmd-cancel-final = Задача № { $id } уже завершена ({ $status }), отменять нечего.
result-caption = Задача № { $id }: { $name }

summary-pdf = PDF, { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }{ $chars ->
    [0] , без текстового слоя
   *[other] , { $chars } символов текста
  }
summary-image = { $label } { $width }×{ $height }{ $frames ->
    [1] {""}
   *[other] , кадров: { $frames }
  }
summary-album = один PDF, { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }, из { $parts ->
    [one] { $parts } файла
   *[other] { $parts } файлов
  }
# Часть альбома, не вошедшая в PDF (issue 13, пункт 5): её номер, имя (если было) и причина.
summary-part-failed = файл { $part }{ $name ->
    [none] {""}
   *[other] {" "}«{ $name }»
  } не вошёл: { $reason }
summary-other = { $label }
# Дописывается к сводке, когда часть файла не вошла в результат (аудит issue 5, пункт 8).
summary-first-page-only = преобразована только страница 1 из { $frames }
summary-first-frame-only = преобразован только кадр 1 из { $frames } (ограничение по числу кадров: { $limit })
summary-no-preview = без превью: первая страница рисовалась слишком долго
summary-images-not-decoded = изображения страниц не удалось декодировать ({ $count ->
    [one] страница
   *[other] страницы
  } { $pages })
# Распознавание текста сканов (issue 13).
summary-ocr-recognized = { $count ->
    [one] распознана { $count } страница
    [few] распознаны { $count } страницы
   *[other] распознано { $count } страниц
  } ({ $chars } символов)
summary-ocr-none = ни одну страницу распознать не удалось
summary-ocr-stopped-page_limit = распознавание остановлено на странице { $page }: за один файл распознаётся не больше { $limit ->
    [one] { $limit } страницы
   *[other] { $limit } страниц
  }
summary-ocr-stopped-time_limit = распознавание остановлено на странице { $page }: истекли { $limit } с, отведённые на распознавание одного файла
summary-ocr-stopped-render_budget = распознавание остановлено на странице { $page }: она рисовалась дольше { $limit } с
summary-ocr-over-budget = не распознаны (дольше { $seconds } с): { $count ->
    [one] страница
   *[other] страницы
  } { $pages }
summary-ocr-failed = распознавание не удалось: { $count ->
    [one] страница
   *[other] страницы
  } { $pages }
summary-ocr-unavailable = распознавание текста на этом сервере сейчас недоступно
summary-searchable-not-needed = PDF с текстовым слоем не нужен: у всех страниц уже есть текстовый слой
summary-searchable-failed = PDF с текстовым слоем из этого файла сделать не удалось (текст — в файле .txt)

settings-title = Что делать с PDF в этом чате? Изменение применяется к новым файлам; тот же файл после изменения обработается заново.
settings-admins-only = В группе /settings могут менять только её администраторы.
settings-pdf-default = Текст (сканы распознаются) и превью первой страницы
settings-pdf-pages = Все страницы картинками (ZIP)
settings-pdf-searchable = PDF с текстовым слоем: по скану можно искать и копировать
settings-saved = Сохранено

size-kb = { $n } КБ
size-mb = { $n } МБ

# Действия с результатом (issue 15): кнопки итогового сообщения, вопросы и ответы на них.
action-btn-rotate = ↻ Повернуть
action-btn-extract = Извлечь страницы
action-btn-split = ✂ Разделить
action-btn-compress = Сжать
action-btn-searchable = PDF с поиском
action-btn-topdf = В PDF
action-btn-some-pages = Некоторые страницы…
action-btn-back = « Назад
action-btn-compress-ebook = Меньше (150 dpi)
action-btn-compress-strong = Минимум (96 dpi)
action-name-rotate = поворачиваю
action-name-extract = извлекаю страницы из
action-name-split = разделяю
action-name-compress = сжимаю
action-name-topdf = делаю PDF из
action-name-searchable = делаю PDF с поиском из
action-accepted = Задача № { $id }: { $action } файл задачи № { $source }. Поставил в очередь — сообщу, когда будет готово.
action-not-yours = Кнопками задачи № { $id } может пользоваться только тот, кто прислал её файл, администратор группы или администратор бота.
action-expired = Результат задачи № { $id } больше не хранится, её кнопки не работают. Пришлите файл ещё раз, чтобы ими воспользоваться.
action-ask-extract = В задаче № { $id } { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }. Какие страницы извлечь? Ответьте списком, например 1-3,7,10-
action-ask-split = В задаче № { $id } { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }. Как разделить? Ответьте частями, например 1-3,4-6,7- (один диапазон, например 1-{ $pages }, — по файлу на страницу).
action-ask-rotate = В задаче № { $id } { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }. Какие страницы и на сколько по часовой стрелке? Ответьте, например, 1-3 90 (90, 180 или 270).
action-range-past-end = «{ $item }» за концом файла: в нём { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }. Укажите страницы от 1 до { $pages }.
action-range-backwards = «{ $item }» идёт в обратную сторону; сначала меньшая страница, например 2-5.
action-range-too-many = Это больше { $limit } диапазонов; укажите меньше.
action-range-syntax = Не могу понять «{ $item }» как страницы. Пишите так: 1-3,7,10- (страницы от 1 до { $pages }).
action-angle = Поворачиваю только на 90°, 180° или 270°, не на { $angle }°.
action-split-single = Получается одна часть; укажите хотя бы два диапазона или один диапазон из нескольких страниц.
summary-rotated = повёрнуто на { $degrees }°: { $count } из { $pages } стр.
summary-extracted = извлечено { $count } из { $pages } стр.
summary-split = { $pages } стр. разделены на { $count } файл(ов)
summary-compressed = сжато с { $before } до { $after } (на { $percent } % меньше)
summary-not-smaller = сжатие не сделает файл меньше { $before }, поэтому присылаю исходный
action-btn-merge = Объединить со следующими
action-ask-merge = Пришлите PDF или изображения, которые добавить после файла задачи № { $id } (файлами, в нужном порядке). Объединю их через { $seconds } с после последнего.
action-merge-accepted = Задача № { $id }: объединяю файл задачи № { $source } с присланными файлами; начну через { $seconds } с после последнего.
action-merge-one = Для объединения нужен хотя бы ещё один файл после файла задачи № { $id }; ничего не сделано. Нажмите «Объединить со следующими» ещё раз и пришлите файлы.
