CREATE TABLE `chat_replies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`update_id` integer NOT NULL,
	`chat_id` integer NOT NULL,
	`user_id` integer,
	`reply_to` integer,
	`job_id` integer,
	`kind` text NOT NULL,
	`text` text NOT NULL,
	`created_at` text NOT NULL,
	`sent_at` text,
	`message_id` integer,
	`tries` integer DEFAULT 0 NOT NULL,
	`not_before` text,
	`last_error` text,
	`gave_up_at` text,
	FOREIGN KEY (`job_id`) REFERENCES `file_jobs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `chat_replies_update_unique` ON `chat_replies` (`update_id`);--> statement-breakpoint
CREATE INDEX `chat_replies_pending` ON `chat_replies` (`id`) WHERE "chat_replies"."sent_at" IS NULL AND "chat_replies"."gave_up_at" IS NULL;--> statement-breakpoint
CREATE INDEX `chat_replies_user_kind` ON `chat_replies` (`user_id`,`kind`,`created_at`);